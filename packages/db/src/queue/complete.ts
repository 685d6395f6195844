import type { Knex } from 'knex';
import { releaseGroups, type GroupRelease } from './release';

/** Bindings holding arrays, which node-postgres sends as Postgres arrays (knex's types do not say so). */
const arrays = (values: unknown[]) => values as Knex.RawBinding[];

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
  /** The state to move to: Successful 3, Retrying 2 or Failed 4. */
  state: 2 | 3 | 4;
  /**
   * For Retrying: the wait before the next attempt. A wait, not a time: the database adds it to
   * its own now(), the clock the claim compares with, so dispatcher clock skew cannot shift retries.
   */
  retryDelayMs: number | null;
  /** Whether this outcome releases the group: Successful, or Failed with continue-after-fail. */
  releasesGroup: boolean;
}

/**
 * Writes a batch of results in one transaction: one multi-row insert of attempts, one state update
 * guarded by the lease (a dispatcher whose lease ran out cannot overwrite newer state), then the
 * group releases. Group rows are locked first, in a fixed order, the order every writer of a group
 * uses, so completion cannot deadlock with producers or operators. Returns the ids whose results
 * were applied (the others had lost their lease).
 */
export async function completeWebhooks(
  knex: Knex,
  dispatcherId: string,
  results: readonly AttemptResult[],
): Promise<number[]> {
  if (results.length === 0) return [];
  return knex.transaction(async (trx) => {
    const releasing = results.filter((r) => r.releasesGroup && r.groupKey !== null);
    if (releasing.length > 0) {
      await trx.raw(
        `select 1 from webhook_groups g
           join unnest(?::int[], ?::text[]) as r(registration_id, group_key) using (registration_id, group_key)
          order by g.registration_id, g.group_key
            for update of g`,
        arrays([releasing.map((r) => r.registrationId), releasing.map((r) => r.groupKey)]),
      );
    }
    const { rows } = await trx.raw<{ rows: { id: number }[] }>(
      `with results as (
         select * from unnest(?::bigint[], ?::smallint[], ?::float8[])
           as r(id, state, retry_delay_ms)
       )
       update webhooks w
          set state = r.state,
              next_attempt_at = case when r.retry_delay_ms is null then w.next_attempt_at
                                     else now() + make_interval(secs => r.retry_delay_ms / 1000.0) end,
              locked_by = null,
              last_modified = now(),
              completed_at = case when r.state in (3, 4) then now() end
         from results r
        where w.id = r.id and w.locked_by = ? and w.state in (1, 2)
       returning w.id`,
      arrays([
        results.map((r) => r.webhookId),
        results.map((r) => r.state),
        results.map((r) => r.retryDelayMs),
        dispatcherId,
      ]),
    );
    const applied = new Set(rows.map((r) => r.id));
    const recorded = results.filter((r) => applied.has(r.webhookId));
    if (recorded.length > 0) {
      await trx.raw(
        `insert into webhook_attempts (webhook_id, number, started_at, duration_ms, status_code, error_kind, response_body)
         select * from unnest(?::bigint[], ?::smallint[], ?::timestamptz[], ?::int[], ?::smallint[], ?::text[], ?::text[])`,
        arrays([
          recorded.map((r) => r.webhookId),
          recorded.map((r) => r.attempt),
          recorded.map((r) => r.startedAt),
          recorded.map((r) => r.durationMs),
          recorded.map((r) => r.statusCode),
          recorded.map((r) => r.errorKind),
          recorded.map((r) => r.responseBody),
        ]),
      );
    }
    const releases: GroupRelease[] = releasing
      .filter((r) => applied.has(r.webhookId))
      .map((r) => ({ registrationId: r.registrationId, groupKey: r.groupKey! }));
    await releaseGroups(trx, releases);
    return [...applied];
  });
}
