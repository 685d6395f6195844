import type { WebhookLastAction } from '@platform/shared';

/** An operator action on a webhook, past tense: `retried`, `aborted (bulk)`, `recovered`. */
const DONE: Readonly<Record<string, string>> = {
  'webhook.retry': 'retried',
  'webhook.abort': 'aborted',
  'webhook.resolve': 'resolved',
  'webhook.resend': 'resent',
  'webhooks.bulk-retry': 'retried (bulk)',
  'webhooks.bulk-abort': 'aborted (bulk)',
  'webhooks.bulk-resolve': 'resolved (bulk)',
  'registration.recover': 'recovered',
};

/**
 * `retried (bulk) by max@example.com`: the last operator action on a webhook, in words; the
 * account by its id where the API does not show its email (another party's, platform support).
 */
export function lastActionText(
  action: Pick<WebhookLastAction, 'action' | 'accountId' | 'accountEmail'>,
): string {
  const done = DONE[action.action] ?? action.action;
  if (action.accountId === null) return done;
  return `${done} by ${action.accountEmail ?? `account ${action.accountId}`}`;
}
