import type { Knex } from 'knex';
import {
  ATTEMPT_OUTCOME_CODES,
  attemptOutcome,
  type DeliveryOutcomeState,
  type WebhookDisabledReason,
} from '@platform/shared';
import type { ClaimedWebhook } from './claim';
import { readDeliveries, type DeliveriesAnswer } from './deliveries';
import { queryPrepared, type PreparedStatement } from './prepared';

/** The outcome of one delivery attempt, as the dispatcher records it. */
export interface AttemptResult {
  webhookId: number;
  registrationId: number;
  /** The webhook's endpoint (`ClaimedWebhook.target_id`), whose breaker the result feeds. */
  targetId: number;
  groupKey: string | null;
  attempt: number;
  startedAt: Date;
  durationMs: number;
  statusCode: number | null;
  /** null on success; else what failed: `status`, `timeout`, `connection`, `redirect`, `private-address`, … */
  errorKind: string | null;
  responseBody: string | null;
  /** The request as sent: URL and headers, credentials redacted (`sentRequest`); null for a skip. */
  request?: { url: string; headers: Record<string, string> } | null;
  /** The answer's headers, bounded and redacted (`answerHeaders`); null without an answer. */
  responseHeaders?: Record<string, string> | null;
  /** The state to move to, as the state machine lets a delivery: Successful, Retrying or Failed. */
  state: DeliveryOutcomeState;
  /**
   * For Retrying: the wait before the next attempt. A wait, not a time: the database adds it to
   * its own now(), the clock the claim compares with, so dispatcher clock skew cannot shift retries.
   */
  retryDelayMs: number | null;
  /**
   * A 429 or 503 with `Retry-After`: how long the whole endpoint is held (ms, clamped like the
   * retry, `endpointHoldMs`); null otherwise. Also a wait, for the same reason.
   */
  holdMs: number | null;
  /** Whether this outcome releases the group: Successful, or Failed with continue-after-fail. */
  releasesGroup: boolean;
}

/** What recording a batch of results came to. */
export interface CompletedBatch {
  /** The webhooks whose results were applied (the others had lost their lease). */
  applied: number[];
  /** The new heads of the groups these results released, leased to the recording dispatcher. */
  leased: ClaimedWebhook[];
  /** Registrations this batch disabled (a 410, or failing for too long); their parties were mailed. */
  disabled: { registrationId: number; reason: WebhookDisabledReason }[];
}

/** When an endpoint's breaker opens and a registration is disabled (docs/dispatcher.md › The breaker). */
export interface HealthPolicy {
  /** Consecutive target failures (timeouts, connection errors, 5xx) that open the breaker. */
  breakerFailures: number;
  /** The first cool-down of an open breaker; it doubles with each open since the last success. */
  breakerCooldownMs: number;
  breakerMaxCooldownMs: number;
  /** A registration whose every attempt failed for this long (and at least `disableMinAttempts`) is disabled. */
  disableAfterMs: number;
  disableMinAttempts: number;
}

/** The one statement `completeWebhooks` sends: a bare call of `webhooks_complete` (Citus R1). */
export const COMPLETE_STATEMENT: PreparedStatement = {
  name: 'webhooks-complete',
  text: `select webhooks_complete($1, $2, $3::bigint[], $4::smallint[], $5::float8[], $6::smallint[],
       $7::timestamptz[], $8::int[], $9::smallint[], $10::text[], $11::text[], $12::int[], $13::text[],
       $14::boolean[], $15::int[], $16::smallint[], $17::float8[], $18::json, $19::jsonb[], $20::jsonb[],
       $21::int[]) as completed`,
};

/**
 * Writes a batch of results with one call of `webhooks_complete` (`functions/webhooks-complete.ts`),
 * one round trip and one commit: the state update guarded by the lease (a dispatcher whose lease ran
 * out cannot overwrite newer state), one attempt row per applied result, the health figures
 * (per-minute stats, the targets' breakers, failing runs and automatic disable), then the group releases,
 * whose new heads are leased to `dispatcherId` for `leaseMs` and returned. Group rows are locked
 * first, in a fixed order, the order every writer of a group uses, so completion cannot deadlock
 * with producers or operators.
 */
export async function completeWebhooks(
  knex: Knex,
  options: {
    dispatcherId: string;
    leaseMs: number;
    policy: HealthPolicy;
    /** The shard group of the results (docs/scaling.md, R2); absent: every bucket, the one database. */
    buckets?: readonly number[];
  },
  results: readonly AttemptResult[],
): Promise<CompletedBatch> {
  if (results.length === 0) return { applied: [], leased: [], disabled: [] };
  const rows = await queryPrepared<{
    completed: Omit<CompletedBatch, 'leased'> & { leased: DeliveriesAnswer };
  }>(knex, COMPLETE_STATEMENT, [
    options.dispatcherId,
    options.leaseMs,
    results.map((r) => r.webhookId),
    results.map((r) => r.state),
    results.map((r) => r.retryDelayMs),
    results.map((r) => r.attempt),
    results.map((r) => r.startedAt),
    results.map((r) => r.durationMs),
    results.map((r) => r.statusCode),
    results.map((r) => r.errorKind),
    results.map((r) => r.responseBody),
    results.map((r) => r.registrationId),
    results.map((r) => r.groupKey),
    results.map((r) => r.releasesGroup),
    results.map((r) => r.targetId),
    results.map((r) => ATTEMPT_OUTCOME_CODES[attemptOutcome(r.errorKind, r.statusCode)]),
    results.map((r) => r.holdMs),
    JSON.stringify(options.policy),
    results.map((r) => (r.request ? JSON.stringify(r.request) : null)),
    results.map((r) => (r.responseHeaders ? JSON.stringify(r.responseHeaders) : null)),
    options.buckets ? [...options.buckets] : null,
  ]);
  const completed = rows[0]!.completed;
  return {
    applied: completed.applied,
    leased: readDeliveries(completed.leased),
    disabled: completed.disabled,
  };
}
