import { describe, expect, it } from 'vitest';
import { lastActionText } from './last-action';

describe('last operator action', () => {
  it('says what was done and by whom', () => {
    expect(lastActionText({ action: 'webhooks.bulk-retry', accountId: 7, accountEmail: null })).toBe(
      'retried (bulk) by account 7',
    );
    expect(lastActionText({ action: 'webhook.abort', accountId: null, accountEmail: null })).toBe('aborted');
    expect(
      lastActionText({ action: 'registration.recover', accountId: 2, accountEmail: 'max@example.com' }),
    ).toBe('recovered by max@example.com');
  });
});
