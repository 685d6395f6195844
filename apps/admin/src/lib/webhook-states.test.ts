import { describe, expect, it } from 'vitest';
import { WebhookState } from '@platform/shared';
import {
  actionAvailability,
  authTypeName,
  eventTypeName,
  isFinalState,
  isMovingState,
  WEBHOOK_STATES,
  webhookStateName,
} from './webhook-states';

const { Created, Retrying, Successful, Failed, Aborted, Pending, Resolved } = WebhookState;

describe('webhook states', () => {
  it('names the states as docs/webhooks.md#the-state-machine does', () => {
    expect(WEBHOOK_STATES.map(webhookStateName)).toEqual([
      'Created',
      'Retrying',
      'Successful',
      'Failed',
      'Aborted',
      'Pending',
      'Resolved',
    ]);
    expect(webhookStateName(9)).toBe('State 9');
  });

  it('allows Abort and Resolve in the non-final states only', () => {
    for (const action of ['abort', 'resolve'] as const) {
      const allowed = WEBHOOK_STATES.filter((state) => actionAvailability(action, state).allowed);
      expect(allowed).toEqual([Created, Retrying, Failed, Pending]);
    }
    expect(actionAvailability('abort', Successful).reason).toBe(
      'A Successful webhook is final; it cannot be aborted.',
    );
    // not "A Aborted": the article follows the name
    expect(actionAvailability('resolve', Aborted).reason).toBe(
      'An Aborted webhook is final; it cannot be resolved.',
    );
  });

  it('allows Retry for Failed only', () => {
    expect(WEBHOOK_STATES.filter((state) => actionAvailability('retry', state).allowed)).toEqual([Failed]);
    expect(actionAvailability('retry', Retrying).reason).toMatch(/Only a Failed webhook/);
  });

  it('knows which states are final and which still move by themselves', () => {
    expect(WEBHOOK_STATES.filter(isFinalState)).toEqual([Successful, Aborted, Resolved]);
    expect(WEBHOOK_STATES.filter(isMovingState)).toEqual([Created, Retrying, Pending]);
  });

  it('names event and authorization types', () => {
    expect(eventTypeName(2)).toBe('Updated');
    expect(authTypeName(4)).toBe('Target API Token');
    expect(authTypeName(9)).toBe('Type 9');
  });
});
