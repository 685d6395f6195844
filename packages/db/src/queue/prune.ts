import type { Knex } from 'knex';
import { FINAL_WEBHOOK_STATES } from '@platform/shared';
import { sqlList } from './sql';

/**
 * Retention pruning (design part 2: attempts and finished webhooks are kept N days). Every
 * statement here touches a bounded number of rows and commits on its own, so pruning a large
 * backlog of old rows never holds many locks or a long transaction; the caller loops.
 */

/** How far one keyset step of a pruning scan got. */
export interface PruneStep {
  /** Rows deleted by this statement. */
  deleted: number;
  /** Highest id looked at; the next step starts after it. */
  lastId: number;
  /**
   * Whether the scan is over: it reached the end of the table, or rows created after the cutoff,
   * which (ids growing with time) cannot be old enough and neither can any row after them.
   */
  done: boolean;
}

/**
 * Deletes up to `limit` webhook attempts created more than `olderThanMs` ago, oldest first,
 * through the index on `created`. Returns how many were deleted: fewer than `limit` means none
 * are left.
 */
export async function pruneAttempts(
  knex: Knex,
  options: { olderThanMs: number; limit: number },
): Promise<number> {
  const result = await knex.raw(
    `with doomed as (
       select id from webhook_attempts
        where created < now() - make_interval(secs => ? / 1000.0)
        order by created
        limit ?
     )
     delete from webhook_attempts a using doomed d where a.id = d.id`,
    [options.olderThanMs, options.limit],
  );
  return (result as { rowCount: number }).rowCount;
}

/**
 * How long the per-minute attempt figures are kept: `GET .../health` reads the last day at most,
 * and a day more leaves room for a console that looks at yesterday. Their own period, not
 * WEBHOOK_ATTEMPT_RETENTION: a busy registration writes a row per minute and latency bucket, and
 * a month of those would be most of the table for nothing.
 */
export const ATTEMPT_STATS_RETENTION_MS = 2 * 86_400_000;

/**
 * Deletes up to `limit` rows of `webhook_attempt_stats` whose minute is more than `olderThanMs`
 * ago, oldest first, through its index on `minute`. Returns how many were deleted: fewer than
 * `limit` means none are left.
 */
export async function pruneAttemptStats(
  knex: Knex,
  options: { olderThanMs: number; limit: number },
): Promise<number> {
  const result = await knex.raw(
    `with doomed as (
       select registration_id, minute, bucket from webhook_attempt_stats
        where minute < now() - make_interval(secs => ? / 1000.0)
        order by minute
        limit ?
     )
     delete from webhook_attempt_stats s using doomed d
      where (s.registration_id, s.minute, s.bucket) = (d.registration_id, d.minute, d.bucket)`,
    [options.olderThanMs, options.limit],
  );
  return (result as { rowCount: number }).rowCount;
}

/**
 * One step of pruning finished webhooks (Successful 3, Aborted 5, Resolved 7) completed more than
 * `olderThanMs` ago: looks at the next `scan` webhooks after id `after`, in id order, and deletes
 * the finished old ones (their remaining attempts go with them, `on delete cascade`).
 *
 * Why a keyset scan over the primary key rather than an index on `completed_at`: such an index
 * would cost an extra index write on every completion, the hottest write there is, to serve an
 * hourly job. Ids grow with `created` and a webhook completes after it is created, so the old
 * finished rows sit at the low end of the key: a run walks from the lowest id until it meets
 * rows created after the cutoff. What it visits besides deletable rows is what the retention
 * keeps: Failed webhooks awaiting an operator, and webhooks still in flight.
 */
export async function pruneWebhooksStep(
  knex: Knex,
  options: { olderThanMs: number; after: number; scan: number },
): Promise<PruneStep> {
  const { rows } = await knex.raw<{
    rows: { deleted: number; last_id: number | null; scanned: number; recent: boolean }[];
  }>(
    `with cutoff as (select now() - make_interval(secs => ? / 1000.0) as at),
     scanned as materialized (
       select id, created from webhooks where id > ? order by id limit ?
     ),
     deleted as (
       -- the state and completed_at of the row as it is now (a final state never changes again)
       delete from webhooks w using scanned s, cutoff
        where w.id = s.id and w.state in (${sqlList(FINAL_WEBHOOK_STATES)}) and w.completed_at < cutoff.at
       returning w.id
     )
     select (select count(*) from deleted)::int as deleted,
            (select max(id) from scanned) as last_id,
            (select count(*) from scanned)::int as scanned,
            coalesce((select max(created) from scanned) >= (select at from cutoff), false) as recent`,
    [options.olderThanMs, options.after, options.scan],
  );
  const row = rows[0]!;
  return {
    deleted: row.deleted,
    lastId: row.last_id ?? options.after,
    done: row.scanned < options.scan || row.recent,
  };
}

/**
 * One step of pruning entity changes: of the next `scan` changes after id `after`, deletes those
 * created more than `olderThanMs` ago that no webhook references any more (their webhooks were
 * pruned, or no registration subscribed to them: every write records a change). A replay
 * (`replayEntityChanges`) may reference an old change again: it locks the change first, so this
 * delete waits for it, and the foreign key refuses the delete of a change it referenced meanwhile;
 * that run of the prune fails, and the next one leaves the change alone. Same keyset walk as
 * `pruneWebhooksStep`.
 */
export async function pruneEntityChangesStep(
  knex: Knex,
  options: { olderThanMs: number; after: number; scan: number },
): Promise<PruneStep> {
  const { rows } = await knex.raw<{
    rows: { deleted: number; last_id: number | null; scanned: number; recent: boolean }[];
  }>(
    `with cutoff as (select now() - make_interval(secs => ? / 1000.0) as at),
     scanned as materialized (
       select id, created from entity_changes where id > ? order by id limit ?
     ),
     deleted as (
       delete from entity_changes c using scanned s, cutoff
        where c.id = s.id and c.created < cutoff.at
          and not exists (select 1 from webhooks w where w.entity_change_id = c.id)
       returning c.id
     )
     select (select count(*) from deleted)::int as deleted,
            (select max(id) from scanned) as last_id,
            (select count(*) from scanned)::int as scanned,
            coalesce((select max(created) from scanned) >= (select at from cutoff), false) as recent`,
    [options.olderThanMs, options.after, options.scan],
  );
  const row = rows[0]!;
  return {
    deleted: row.deleted,
    lastId: row.last_id ?? options.after,
    done: row.scanned < options.scan || row.recent,
  };
}
