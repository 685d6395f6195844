import type { AttemptResult, ClaimedWebhook } from '@platform/db';
import type { DeliveryOutcome } from '@platform/delivery';
import { holdsGroup, WebhookState } from '@platform/shared';
import { endpointHoldMs, nextAttemptDelay, parseRetryAfter } from './retry';

/**
 * What one attempt comes to: Successful on a 2xx; otherwise Retrying after the scheduled wait
 * (stretched by `Retry-After`, `nextAttemptDelay`), or Failed after the last attempt; a
 * `Retry-After` also holds the whole endpoint (`endpointHoldMs`). A result
 * releases the group when the webhook no longer holds it in its new state (`holdsGroup`):
 * Successful always, Failed when its registration lets the group continue after a failure.
 * Every failure counts alike here, a 410 and `circuit-open` included: what else a 410 does
 * (disabling its registration) happens when the result is written.
 *
 * `schedule` holds the waits before each attempt (its length is the number of attempts); `now`
 * (epoch ms) is when an HTTP-date `Retry-After` is measured from.
 */
export function attemptResult(
  webhook: ClaimedWebhook,
  outcome: DeliveryOutcome,
  schedule: readonly number[],
  now: number,
): AttemptResult {
  const retryAfterMs = outcome.errorKind === null ? undefined : parseRetryAfter(outcome.retryAfter, now);
  const delay = outcome.errorKind === null ? null : nextAttemptDelay(schedule, webhook.attempt, retryAfterMs);
  const state =
    outcome.errorKind === null
      ? WebhookState.Successful
      : delay === null
        ? WebhookState.Failed
        : WebhookState.Retrying;
  return {
    webhookId: webhook.id,
    registrationId: webhook.registration_id,
    targetId: webhook.target_id,
    groupKey: webhook.group_key,
    attempt: webhook.attempt,
    startedAt: outcome.startedAt,
    durationMs: outcome.durationMs,
    statusCode: outcome.statusCode,
    errorKind: outcome.errorKind,
    responseBody: outcome.responseBody,
    request: outcome.request ?? null,
    responseHeaders: outcome.responseHeaders ?? null,
    state,
    retryDelayMs: delay,
    holdMs: endpointHoldMs(schedule, webhook.attempt, retryAfterMs),
    releasesGroup: !holdsGroup(state, webhook.should_group_continue_after_fail),
  };
}

/**
 * The outcome of an attempt that sent nothing, at `now` (epoch ms): `circuit-open` (the target's
 * breaker is open), `interrupted` (the try a previous lease counted never reported) or `internal`
 * (the dispatcher could not build the request). It counts like any failed attempt, so the retry
 * schedule and its number of attempts keep their meaning.
 */
export function outcomeWithoutRequest(
  errorKind: 'circuit-open' | 'interrupted' | 'internal',
  now: number,
): DeliveryOutcome {
  return { startedAt: new Date(now), durationMs: 0, statusCode: null, errorKind, responseBody: null };
}

/**
 * How loud an attempt's log line is: a success is routine (debug), and so is an attempt an open
 * breaker skipped; a failure that will be retried is worth a line (info); a webhook that failed
 * for good needs an operator (warn).
 */
export function attemptLogLevel(result: AttemptResult): 'debug' | 'info' | 'warn' {
  if (result.state === WebhookState.Successful || result.errorKind === 'circuit-open') return 'debug';
  return result.state === WebhookState.Retrying ? 'info' : 'warn';
}
