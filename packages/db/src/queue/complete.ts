import type { Knex } from 'knex';
import type { DeliveryOutcomeState } from '@platform/shared';
import type { ClaimedWebhook } from './claim';
import { prepared } from './prepared';
import { arrays } from './sql';

/** The outcome of one delivery attempt, as the dispatcher records it. */
export interface AttemptResult {
  webhookId: number;
  registrationId: number;
  groupKey: string | null;
  attempt: number;
  startedAt: Date;
  durationMs: number;
  statusCode: number | null;
  /** null on success; else what failed: `status`, `timeout`, `connection`, `redirect`, `private-address`, … */
  errorKind: string | null;
  responseBody: string | null;
  /** The state to move to, as the state machine lets a delivery: Successful, Retrying or Failed. */
  state: DeliveryOutcomeState;
  /**
   * For Retrying: the wait before the next attempt. A wait, not a time: the database adds it to
   * its own now(), the clock the claim compares with, so dispatcher clock skew cannot shift retries.
   */
  retryDelayMs: number | null;
  /** Whether this outcome releases the group: Successful, or Failed with continue-after-fail. */
  releasesGroup: boolean;
}

/** What recording a batch of results came to. */
export interface CompletedBatch {
  /** The webhooks whose results were applied (the others had lost their lease). */
  applied: number[];
  /** The new heads of the groups these results released, leased to the recording dispatcher. */
  leased: ClaimedWebhook[];
}

/**
 * Writes a batch of results with one call of `webhooks_complete` (migration 20261125000000), one
 * round trip and one commit: the state update guarded by the lease (a dispatcher whose lease ran
 * out cannot overwrite newer state), one attempt row per applied result, then the group releases,
 * whose new heads are leased to `dispatcherId` for `leaseMs` and returned. Group rows are locked
 * first, in a fixed order, the order every writer of a group uses, so completion cannot deadlock
 * with producers or operators.
 */
export async function completeWebhooks(
  knex: Knex,
  options: { dispatcherId: string; leaseMs: number },
  results: readonly AttemptResult[],
): Promise<CompletedBatch> {
  if (results.length === 0) return { applied: [], leased: [] };
  const { rows } = await knex
    .raw<{ rows: { completed: CompletedBatch }[] }>(
      `select webhooks_complete(?, ?, ?::bigint[], ?::smallint[], ?::float8[], ?::smallint[],
       ?::timestamptz[], ?::int[], ?::smallint[], ?::text[], ?::text[], ?::int[], ?::text[], ?::boolean[]) as completed`,
      arrays([
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
      ]),
    )
    .options(prepared('webhooks-complete'));
  return rows[0]!.completed;
}
