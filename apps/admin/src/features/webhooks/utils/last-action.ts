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

/** `retried (bulk) by account 7`: the last operator action on a webhook, in words. */
export function lastActionText(action: Pick<WebhookLastAction, 'action' | 'accountId'>): string {
  const done = DONE[action.action] ?? action.action;
  return action.accountId === null ? done : `${done} by account ${action.accountId}`;
}
