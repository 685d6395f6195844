import type { WebhookOperationRead } from '@platform/shared';

/** For unit tests: a running retry of 120 webhooks, half processed, with `overrides`. */
export function anOperation(overrides: Partial<WebhookOperationRead> = {}): WebhookOperationRead {
  return {
    id: 9,
    action: 'retry',
    state: 'running',
    dryRun: false,
    freshSchedule: false,
    registrationId: null,
    filter: { states: [4] },
    total: 120,
    done: 60,
    changed: 50,
    skipped: { 'not-failed': 10 },
    error: null,
    startedAt: '2026-11-27T10:00:00Z',
    finishedAt: null,
    requestedByAccountId: 1,
    ...overrides,
  };
}
