import { WEBHOOK_REGISTRATION_STATUSES } from '@platform/shared';
import { describe, expect, it } from 'vitest';
import { actionIntent, registrationActionAvailability } from './registration-actions';

describe('registration actions', () => {
  it('pauses anything not paused, and resumes anything not active', () => {
    const allowed = (action: 'pause' | 'resume') =>
      WEBHOOK_REGISTRATION_STATUSES.filter(
        (status) => registrationActionAvailability(action, status).allowed,
      );
    expect(allowed('pause')).toEqual(['active', 'disabled']);
    expect(allowed('resume')).toEqual(['paused', 'disabled']);
    expect(registrationActionAvailability('resume', 'active').reason).toMatch(/nothing to resume/);
  });

  it('calls resuming a disabled registration re-enabling it', () => {
    expect(actionIntent('resume', 'disabled')).toBe('re-enable');
    expect(actionIntent('resume', 'paused')).toBe('resume');
    expect(actionIntent('pause', 'disabled')).toBe('pause');
  });
});
