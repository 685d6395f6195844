import type { Knex } from 'knex';
import { FINAL_WEBHOOK_STATES, SERIES_MAX_HOURS } from '@platform/shared';
import { PgErrorCode, pgErrorCode } from '../errors';
import { arrays, inBuckets, sqlList } from './sql';

/**
 * Retention pruning (docs/dispatcher.md#prune-job: attempts and finished webhooks are kept N days). Attempts
 * and entity changes go a day's partition at a time (`dropExpiredPartitions`); finished webhooks
 * and the per-minute figures row by row, in statements that each touch a bounded number of rows
 * and commit on their own, so pruning a large backlog never holds many locks or a long
 * transaction; the caller loops.
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
 * How long the per-minute attempt figures are kept: `GET .../health` reads the last day at most,
 * and the console's time series (`GET /api/webhook-stats/series`) the last SERIES_MAX_HOURS. Their own period, not
 * WEBHOOK_ATTEMPT_RETENTION: a busy registration writes a row per minute and latency bucket, and
 * a month of those would be most of the table for nothing.
 */
export const ATTEMPT_STATS_RETENTION_MS = SERIES_MAX_HOURS * 3_600_000;

/** The statement of `pruneAttemptStats` (bindings: olderThanMs, limit). */
export const PRUNE_ATTEMPT_STATS_SQL = `with doomed as (
   select registration_id, minute, bucket from webhook_attempt_stats
    where minute < now() - make_interval(secs => ? / 1000.0)
    order by minute
    limit ?
 )
 delete from webhook_attempt_stats s using doomed d
  where (s.registration_id, s.minute, s.bucket) = (d.registration_id, d.minute, d.bucket)`;

/**
 * Deletes up to `limit` rows of `webhook_attempt_stats` whose minute is more than `olderThanMs`
 * ago, oldest first, through its index on `minute`. Returns how many were deleted: fewer than
 * `limit` means none are left.
 */
export async function pruneAttemptStats(
  knex: Knex,
  options: { olderThanMs: number; limit: number },
): Promise<number> {
  const result = await knex.raw(PRUNE_ATTEMPT_STATS_SQL, [options.olderThanMs, options.limit]);
  return (result as { rowCount: number }).rowCount;
}

/**
 * Tables of short-lived rows the API writes and never deletes, with the column past which a row
 * is of no use, and how long after that it is kept:
 * - `rate_limit_hits`: a fixed window's count matters until the window ends; no policy's window
 *   is longer than a day (the API's configuration refuses one that is), so a row a day past its
 *   window's start is dead.
 * - `refresh_tokens` and `mfa_login_tokens`: once expired, the token's signature check refuses
 *   it before its row is read, so reuse detection (a used token presented again revokes its
 *   family) never needs the row of an expired token. A day more keeps them for an investigation
 *   of a recent incident.
 */
export const EXPIRING_TABLES = {
  rate_limit_hits: { column: 'window_start', keptMs: 86_400_000 },
  refresh_tokens: { column: 'expires_at', keptMs: 86_400_000 },
  mfa_login_tokens: { column: 'expires_at', keptMs: 86_400_000 },
} as const;
export type ExpiringTable = keyof typeof EXPIRING_TABLES;

/** The longest window a rate-limit policy may have: its rows are pruned a day after their window starts. */
export const RATE_LIMIT_MAX_WINDOW_MS = EXPIRING_TABLES.rate_limit_hits.keptMs;

/**
 * Deletes up to `limit` rows of `table` that are past their use (EXPIRING_TABLES). Returns how many
 * were deleted: fewer than `limit` means none are left.
 */
export async function pruneExpired(
  knex: Knex,
  table: ExpiringTable,
  options: { limit: number },
): Promise<number> {
  const { column, keptMs } = EXPIRING_TABLES[table];
  const result = await knex.raw(
    `delete from ?? where ctid = any (array(
       select ctid from ?? where ?? < now() - make_interval(secs => ? / 1000.0) limit ?
     ))`,
    [table, table, column, keptMs, options.limit],
  );
  return (result as { rowCount: number }).rowCount;
}

/** The statement of `pruneWebhooksStep` (bindings: olderThanMs, the shard group twice, after, scan, the shard group twice). */
export const PRUNE_WEBHOOKS_STEP_SQL = `with cutoff as (select now() - make_interval(secs => ? / 1000.0) as at),
 scanned as materialized (
   select id, bucket, created from webhooks where ${inBuckets('webhooks', '?::int[]')} and id > ? order by id limit ?
 ),
 deleted as (
   -- the state and completed_at of the row as it is now (a final state never changes again)
   delete from webhooks w using scanned s, cutoff
    where ${inBuckets('w', '?::int[]')} and w.bucket = s.bucket and w.id = s.id and w.state in (${sqlList(FINAL_WEBHOOK_STATES)}) and w.completed_at < cutoff.at
   returning w.id
 )
 select (select count(*) from deleted)::int as deleted,
        (select max(id) from scanned) as last_id,
        (select count(*) from scanned)::int as scanned,
        coalesce((select max(created) from scanned) >= (select at from cutoff), false) as recent`;

/**
 * One step of pruning finished webhooks (Successful 3, Aborted 5, Resolved 7) completed more than
 * `olderThanMs` ago: looks at the next `scan` webhooks after id `after`, in id order, and deletes
 * the finished old ones. Their attempts are not touched: they go with their own partition.
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
  options: {
    olderThanMs: number;
    after: number;
    scan: number;
    /** The shard group to walk (absent: every bucket, the one database; `inBuckets`). */
    buckets?: readonly number[];
  },
): Promise<PruneStep> {
  const group = options.buckets ? [...options.buckets] : null;
  const { rows } = await knex.raw<{
    rows: { deleted: number; last_id: number | null; scanned: number; recent: boolean }[];
  }>(
    PRUNE_WEBHOOKS_STEP_SQL,
    arrays([options.olderThanMs, group, group, options.after, options.scan, group, group]),
  );
  const row = rows[0]!;
  return {
    deleted: row.deleted,
    lastId: row.last_id ?? options.after,
    done: row.scanned < options.scan || row.recent,
  };
}

/**
 * The tables partitioned by day (migration 20261128000000, docs/dispatcher.md › Prune job): a
 * partition per UTC day, by range of `id`, named `<table>_YYYYMMDD`, plus `<table>_initial`
 * holding the rows from before partitioning.
 */
export const PARTITIONED_TABLES = ['webhook_attempts', 'entity_changes'] as const;
export type PartitionedTable = (typeof PARTITIONED_TABLES)[number];

/** Days of partitions that exist ahead of today. */
export const PARTITIONS_AHEAD = 2;

/**
 * How long a partition's attach or detach waits for its locks (`webhooks` too, through the
 * foreign key to `entity_changes`) before giving up until the next run: the longest the queue's
 * writers can be held up behind it.
 */
export const PARTITION_LOCK_TIMEOUT_MS = 1_000;

/**
 * Creates the partitions of `table` for `day` (today in UTC by default, `YYYY-MM-DD`) and the
 * PARTITIONS_AHEAD days after it that do not exist yet, and moves the table's id sequence forward
 * to the start of that day's range (`time_partitions_ensure`, `functions/time-partitions-ensure.ts`). Answers the partitions created.
 */
export async function ensurePartitions(
  knex: Knex,
  table: PartitionedTable,
  options: { day?: string } = {},
): Promise<string[]> {
  return knex.transaction(async (trx) => {
    await trx.raw(`set local lock_timeout = ${PARTITION_LOCK_TIMEOUT_MS}`);
    const { rows } = await trx.raw<{ rows: { created: string[] }[] }>(
      `select time_partitions_ensure(?, coalesce(?::date, (now() at time zone 'UTC')::date), ?) as created`,
      [table, options.day ?? null, PARTITIONS_AHEAD],
    );
    return rows[0]!.created;
  });
}

/** A partition of a partitioned table, or a table of its name left detached by a run that died. */
export interface Partition {
  name: string;
  /** The UTC day it holds, `YYYY-MM-DD`; null for `<table>_initial`. */
  day: string | null;
  /** `detaching`: a concurrent detach was interrupted between its two transactions. */
  state: 'attached' | 'detaching' | 'detached';
}

/** The partitions of `table`, and tables named like them that are no longer attached. */
export async function listPartitions(knex: Knex, table: PartitionedTable): Promise<Partition[]> {
  const { rows } = await knex.raw<{
    rows: { name: string; day: string | null; state: Partition['state'] }[];
  }>(
    `select c.relname as name,
            to_char(to_date(nullif(substring(c.relname from '_([0-9]{8})$'), ''), 'YYYYMMDD'), 'YYYY-MM-DD') as day,
            case when i.inhrelid is null then 'detached' when i.inhdetachpending then 'detaching'
                 else 'attached' end as state
       from pg_class c
       left join pg_inherits i on i.inhrelid = c.oid and i.inhparent = ?::regclass
      where c.relnamespace = current_schema()::regnamespace and c.relkind = 'r'
        and c.relname ~ ('^' || ? || '_([0-9]{8}|initial)$')
      order by day nulls first`,
    [table, table],
  );
  return rows;
}

/** What `dropExpiredPartitions` did. */
export interface PartitionPrune {
  /** Partitions dropped, with their rows as the planner's statistics count them (no count is run). */
  dropped: { partition: string; rows: number }[];
  /** Expired partitions of changes kept because webhooks reference them, and how many (1,000 at most). */
  pinned: { partition: string; webhooks: number }[];
  /**
   * Expired partitions left for the next run because a detach waited longer than
   * PARTITION_LOCK_TIMEOUT_MS for its locks (the first of them; the others were not tried).
   */
  busy: string[];
}

/**
 * Drops the partitions of `table` whose rows are all older than `olderThanMs`: those of days
 * before today whose day and newest row (the one with the highest id) are both older than that,
 * and `<table>_initial` once its newest row is. A partition of `entity_changes` is dropped only
 * when no webhook references a change in it (the foreign key would refuse the detach anyway): a
 * Failed webhook, one still open, or a finished one its own retention keeps, pins its change's
 * partition, which is reported and tried again next run.
 *
 * The detach is `concurrently` (reads and writes of the table go on; the foreign key check holds
 * a SHARE lock on `webhooks` while it runs) and waits at most PARTITION_LOCK_TIMEOUT_MS for a
 * lock; the drop of the detached table touches nothing else. A detach interrupted between its two
 * transactions is finished, and a table a dying run detached without dropping is dropped, by the
 * next run.
 */
export async function dropExpiredPartitions(
  knex: Knex,
  table: PartitionedTable,
  options: { olderThanMs: number },
): Promise<PartitionPrune> {
  const result: PartitionPrune = { dropped: [], pinned: [], busy: [] };
  const { rows: clock } = await knex.raw<{ rows: { cutoff: Date; today: string }[] }>(
    `select now() - make_interval(secs => ? / 1000.0) as cutoff,
            to_char((now() at time zone 'UTC')::date, 'YYYY-MM-DD') as today`,
    [options.olderThanMs],
  );
  const { cutoff, today } = clock[0]!;
  for (const partition of await listPartitions(knex, table)) {
    if (partition.day !== null && partition.day >= today) continue;
    const { rows } = await knex.raw<{
      rows: { expired: boolean; low: number | null; high: number | null; rows: number }[];
    }>(
      `select coalesce((select created from only ?? order by id desc limit 1) < ?, true)
                and coalesce((?::date + 1)::timestamp at time zone 'UTC' <= ?, true) as expired,
              (select min(id) from only ??) as low, (select max(id) from only ??) as high,
              greatest(c.reltuples, 0)::float8 as rows
         from pg_class c where c.oid = ?::regclass`,
      [partition.name, cutoff, partition.day, cutoff, partition.name, partition.name, partition.name],
    );
    const facts = rows[0]!;
    if (!facts.expired) continue;
    // the lock one detach waited for in vain would keep the next one waiting as long
    if (result.busy.length > 0) {
      result.busy.push(partition.name);
      continue;
    }
    if (table === 'entity_changes' && partition.state !== 'detached' && facts.low !== null) {
      const webhooks = await referencingWebhooks(knex, facts.low, facts.high!);
      if (webhooks > 0) {
        result.pinned.push({ partition: partition.name, webhooks });
        continue;
      }
    }
    try {
      if (partition.state !== 'detached') await detach(knex, table, partition);
    } catch (error) {
      const code = pgErrorCode(error);
      if (code === PgErrorCode.LockNotAvailable) {
        result.busy.push(partition.name);
        continue;
      }
      // a replay referenced a change of it since the check above
      if (code === PgErrorCode.ForeignKeyViolation) {
        result.pinned.push({
          partition: partition.name,
          webhooks: await referencingWebhooks(knex, facts.low!, facts.high!),
        });
        continue;
      }
      throw error;
    }
    await knex.raw(`drop table ??`, [partition.name]);
    result.dropped.push({ partition: partition.name, rows: facts.rows });
  }
  return result;
}

/** How many webhooks (up to 1,000) reference a change with an id in [low, high], through `webhooks_change`. */
async function referencingWebhooks(knex: Knex, low: number, high: number): Promise<number> {
  const { rows } = await knex.raw<{ rows: { n: number }[] }>(
    `select count(*)::int as n from (select 1 from webhooks where entity_change_id between ? and ? limit 1000) w`,
    [low, high],
  );
  return rows[0]!.n;
}

/**
 * The detach of an expired partition, and the end of one a dying run interrupted. Citus refuses
 * both (docs/scaling.md, R9): on Citus the job detaches without `concurrently`, under
 * `lock_timeout`; the Citus lint reads these (`HOT_STATEMENTS`).
 */
export const DETACH_PARTITION_SQL = {
  concurrently: 'alter table ?? detach partition ?? concurrently',
  finalize: 'alter table ?? detach partition ?? finalize',
} as const;

/**
 * Detaches a partition concurrently (or finishes an interrupted detach), on a pooled session of
 * its own with the lock timeout set: `detach ... concurrently` runs outside a transaction, so
 * `set local` cannot bound it.
 */
async function detach(knex: Knex, table: PartitionedTable, partition: Partition): Promise<void> {
  const client = (await knex.client.acquireConnection()) as { query(sql: string): Promise<unknown> };
  try {
    await client.query(`set lock_timeout = ${PARTITION_LOCK_TIMEOUT_MS}`);
    const sql = DETACH_PARTITION_SQL[partition.state === 'detaching' ? 'finalize' : 'concurrently'];
    await client.query(knex.raw(sql, [table, partition.name]).toQuery());
  } finally {
    await client.query('reset lock_timeout').catch(() => {});
    await knex.client.releaseConnection(client);
  }
}
