import type { ClaimedWebhook } from '@platform/db';
import type { DeliveryOutcome } from '@platform/delivery';
import { WebhookState } from '@platform/shared';
import { describe, expect, it } from 'vitest';
import { attemptLogLevel, attemptResult, outcomeWithoutRequest } from './outcome';

const MINUTE = 60_000;
/** Three attempts: at once, after 5 minutes, after 15 more. */
const SCHEDULE = [0, 5 * MINUTE, 15 * MINUTE];
const NOW = Date.parse('2026-11-22T10:00:00Z');

function claimed(overrides: Partial<ClaimedWebhook> = {}): ClaimedWebhook {
  return {
    id: 41,
    registration_id: 7,
    target_id: 3,
    origin: 'https://example.com',
    attempt: 1,
    group_key: 'order-9',
    target_url: 'https://example.com/hook',
    auth_type: 0,
    auth_credentials: null,
    signing_secret: 'sealed',
    previous_signing_secret: null,
    registration_party_id: 2,
    should_group_continue_after_fail: false,
    registration_deleted: false,
    interrupted: false,
    entity: {},
    initiator_party_id: 2,
    initiator_account_id: null,
    event_id: 5,
    event_type: 1,
    event_entity_name: 'order',
    event_created: '2026-11-22T09:59:00Z',
    event_last_modified: null,
    event_deleted: null,
    trace_context: null,
    ...overrides,
  };
}

function answered(statusCode: number, retryAfter?: string): DeliveryOutcome {
  return {
    startedAt: new Date(NOW - 120),
    durationMs: 120,
    statusCode,
    errorKind: statusCode >= 200 && statusCode < 300 ? null : 'status',
    responseBody: 'body',
    ...(retryAfter === undefined ? {} : { retryAfter }),
  };
}

/** The decision alone: state, wait and whether the group is released. */
function decide(webhook: ClaimedWebhook, outcome: DeliveryOutcome) {
  const { state, retryDelayMs, releasesGroup } = attemptResult(webhook, outcome, SCHEDULE, NOW);
  return { state, retryDelayMs, releasesGroup };
}

describe('attemptResult', () => {
  it('makes a 2xx Successful, which releases its group whatever the registration says', () => {
    for (const continueAfterFail of [false, true]) {
      const webhook = claimed({ should_group_continue_after_fail: continueAfterFail });
      expect(decide(webhook, answered(204))).toEqual({
        state: WebhookState.Successful,
        retryDelayMs: null,
        releasesGroup: true,
      });
    }
  });

  it('ignores Retry-After on a success', () => {
    expect(decide(claimed(), answered(200, '3600')).retryDelayMs).toBeNull();
  });

  it('retries a 4xx or 5xx with attempts left after the scheduled wait, holding the group', () => {
    for (const status of [400, 404, 500, 503]) {
      expect(decide(claimed({ attempt: 1 }), answered(status)), String(status)).toEqual({
        state: WebhookState.Retrying,
        retryDelayMs: 5 * MINUTE,
        releasesGroup: false,
      });
    }
    expect(decide(claimed({ attempt: 2 }), answered(500)).retryDelayMs).toBe(15 * MINUTE);
  });

  it('retries a failure without an answer like any other', () => {
    const timeout: DeliveryOutcome = { ...answered(0), statusCode: null, errorKind: 'timeout' };
    expect(decide(claimed(), timeout).state).toBe(WebhookState.Retrying);
  });

  it('fails the last attempt for good, still holding the group without continue-after-fail', () => {
    expect(decide(claimed({ attempt: 3 }), answered(500))).toEqual({
      state: WebhookState.Failed,
      retryDelayMs: null,
      releasesGroup: false,
    });
  });

  it('fails the last attempt and releases the group with continue-after-fail', () => {
    const webhook = claimed({ attempt: 3, should_group_continue_after_fail: true });
    expect(decide(webhook, answered(500))).toEqual({
      state: WebhookState.Failed,
      retryDelayMs: null,
      releasesGroup: true,
    });
  });

  it('holds the group while retrying even with continue-after-fail', () => {
    const webhook = claimed({ attempt: 1, should_group_continue_after_fail: true });
    expect(decide(webhook, answered(500)).releasesGroup).toBe(false);
  });

  it('fails an operator-retried webhook after its one extra attempt', () => {
    expect(decide(claimed({ attempt: 4 }), answered(500)).state).toBe(WebhookState.Failed);
  });

  it('waits as long as Retry-After asks, between the scheduled wait and twice it', () => {
    const after = (header: string) => decide(claimed({ attempt: 1 }), answered(429, header)).retryDelayMs;
    expect(after('420')).toBe(7 * MINUTE);
    expect(after('60')).toBe(5 * MINUTE);
    expect(after('86400')).toBe(10 * MINUTE);
    // an HTTP date is measured from the `now` given
    expect(after('Sun, 22 Nov 2026 10:08:00 GMT')).toBe(8 * MINUTE);
    expect(after('soon')).toBe(5 * MINUTE);
  });

  it('lets Retry-After extend nothing after the last attempt', () => {
    expect(decide(claimed({ attempt: 3 }), answered(503, '60')).state).toBe(WebhookState.Failed);
  });

  it('treats 410 Gone as any failed attempt (its registration is disabled when written)', () => {
    expect(decide(claimed({ attempt: 1 }), answered(410)).state).toBe(WebhookState.Retrying);
    expect(decide(claimed({ attempt: 3 }), answered(410)).state).toBe(WebhookState.Failed);
  });

  it('counts an attempt that sent nothing (open breaker, interrupted try, internal error)', () => {
    for (const kind of ['circuit-open', 'interrupted', 'internal'] as const) {
      const outcome = outcomeWithoutRequest(kind, NOW);
      expect(decide(claimed({ attempt: 1 }), outcome), kind).toEqual({
        state: WebhookState.Retrying,
        retryDelayMs: 5 * MINUTE,
        releasesGroup: false,
      });
      expect(decide(claimed({ attempt: 3 }), outcome).state, kind).toBe(WebhookState.Failed);
    }
  });

  it('carries the webhook and its attempt into the result', () => {
    const outcome = answered(500);
    expect(attemptResult(claimed({ attempt: 2 }), outcome, SCHEDULE, NOW)).toMatchObject({
      webhookId: 41,
      registrationId: 7,
      targetId: 3,
      groupKey: 'order-9',
      attempt: 2,
      startedAt: outcome.startedAt,
      durationMs: 120,
      statusCode: 500,
      errorKind: 'status',
      responseBody: 'body',
    });
  });
});

describe('outcomeWithoutRequest', () => {
  it('records no request: no status, no answer, no time spent, started now', () => {
    expect(outcomeWithoutRequest('circuit-open', NOW)).toEqual({
      startedAt: new Date(NOW),
      durationMs: 0,
      statusCode: null,
      errorKind: 'circuit-open',
      responseBody: null,
    });
  });
});

describe('attemptLogLevel', () => {
  const level = (webhook: ClaimedWebhook, outcome: DeliveryOutcome) =>
    attemptLogLevel(attemptResult(webhook, outcome, SCHEDULE, NOW));

  it('logs a success and an attempt skipped by an open breaker at debug', () => {
    expect(level(claimed(), answered(200))).toBe('debug');
    expect(level(claimed({ attempt: 1 }), outcomeWithoutRequest('circuit-open', NOW))).toBe('debug');
    expect(level(claimed({ attempt: 3 }), outcomeWithoutRequest('circuit-open', NOW))).toBe('debug');
  });

  it('logs a failure to retry at info, and one that failed for good at warn', () => {
    expect(level(claimed({ attempt: 1 }), answered(500))).toBe('info');
    expect(level(claimed({ attempt: 3 }), answered(500))).toBe('warn');
    expect(level(claimed({ attempt: 3 }), outcomeWithoutRequest('internal', NOW))).toBe('warn');
  });
});
