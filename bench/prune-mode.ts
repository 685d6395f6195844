import { createKnex, dropExpiredPartitions, ensurePartitions, type Knex } from '@platform/db';
import { PRUNE_BATCH } from '../apps/dispatcher/src/maintenance';
import type { BenchContext } from './context';
import { round } from './drain';
import { machineBusyMs, processCpuMs } from './processes';

const DAY = 86_400_000;
/** Days of expired attempts, oldest first, this many days ago and the ones after it. */
const FIRST_DAY_AGO = 40;
const DAYS = 9;
/** Rounds: each prunes the next DAYS / ROUNDS days, by keyset delete and by partition drop. */
const ROUNDS = 3;
/** The table of the old shape, unpartitioned, the keyset delete runs on. */
const KEYSET_TABLE = 'webhook_attempts_keyset';

/**
 * The retention of attempts as the prune job ran it before time partitioning (`pruneAttempts`, replaced by
 * the partition drop): up to PRUNE_BATCH of the oldest attempts through the index on `created`,
 * deleted by id, statement after statement until one deletes fewer. Answers the rows deleted.
 */
async function keysetDelete(knex: Knex, cutoff: Date): Promise<number> {
  let deleted = 0;
  for (;;) {
    const result = (await knex.raw(
      `with doomed as (
         select id from ${KEYSET_TABLE} where created < ? order by created limit ?
       )
       delete from ${KEYSET_TABLE} a using doomed d where a.id = d.id`,
      [cutoff, PRUNE_BATCH],
    )) as { rowCount: number };
    deleted += result.rowCount;
    if (result.rowCount < PRUNE_BATCH) return deleted;
  }
}

interface Measured {
  ms: number;
  /** CPU of the database session that ran it. */
  backendCpuMs: number;
  /** CPU of the whole machine meanwhile (other work included). */
  machineCpuMs: number;
  walMb: number;
}

/** Wall time, CPU and WAL written by `work`, run on `knex`'s one connection (backend `pid`). */
async function measure<T>(
  knex: Knex,
  pid: number,
  work: () => Promise<T>,
): Promise<Measured & { result: T }> {
  const { rows: before } = await knex.raw<{ rows: { lsn: string }[] }>(
    `select pg_current_wal_lsn()::text as lsn`,
  );
  const backendBefore = await processCpuMs(pid);
  const machineBefore = await machineBusyMs();
  const started = performance.now();
  const result = await work();
  const ms = performance.now() - started;
  const backendCpuMs = (await processCpuMs(pid)) - backendBefore;
  const machineCpuMs = (await machineBusyMs()) - machineBefore;
  const { rows } = await knex.raw<{ rows: { bytes: number }[] }>(
    `select pg_wal_lsn_diff(pg_current_wal_lsn(), ?::pg_lsn)::float8 as bytes`,
    [before[0]!.lsn],
  );
  return { result, ms, backendCpuMs, machineCpuMs, walMb: rows[0]!.bytes / 1e6 };
}

const median = (values: number[]) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)]!;

/**
 * `pnpm bench --prune [--attempts N]`: N attempts (10,000,000) seeded by SQL over DAYS days
 * 40 to 32 days ago, plus N / 20 today that no retention touches, twice: into the partitioned
 * `webhook_attempts` (a partition a day, as the prune job lays them out) and into a table of the
 * shape it had before partitioning, with its indexes (`webhook_attempts_keyset`). Then ROUNDS
 * rounds, interleaved, each pruning the next three days: the old keyset delete on the old shape,
 * then the partition drop (`dropExpiredPartitions`, what the prune job runs) on the partitioned
 * table, with the cutoff at the same midnight, so both remove the same rows. After each round the
 * old table is vacuumed (timed apart, not counted in the ratio), as autovacuum would between two
 * hourly runs. Reports the wall time, the CPU (of the session and of the machine) and the WAL of
 * each, and the median ratios.
 */
export async function pruneMode(context: BenchContext, options: { attempts: number }) {
  const { cluster, log } = context;
  const db = await cluster.create('prune');
  const { knex } = db;
  const perDay = Math.floor(options.attempts / DAYS);
  const recent = Math.floor(options.attempts / 20);
  const { rows: clock } = await knex.raw<{ rows: { today: string }[] }>(
    `select to_char((now() at time zone 'UTC')::date, 'YYYY-MM-DD') as today`,
  );
  const today = new Date(`${clock[0]!.today}T00:00:00Z`).getTime();
  const dayStart = (daysAgo: number) => new Date(today - daysAgo * DAY);

  log(`prune: seeding ${perDay * DAYS} expired attempts over ${DAYS} days and ${recent} recent ones, twice`);
  const seedStarted = performance.now();
  const seedDay = async (start: Date, rows: number) => {
    const day = start.toISOString().slice(0, 10);
    await ensurePartitions(knex, 'webhook_attempts', { day });
    // ids of the day's range, created spread over the day in id order
    await knex.raw(
      `insert into webhook_attempts
         (id, webhook_id, number, started_at, duration_ms, status_code, response_body, created)
       select time_partition_start(?::date) + g, g % 100000 + 1, 1, t, 5 + g % 50, 200, repeat('x', 100), t
         from generate_series(1, ?) g
         cross join lateral (select ?::timestamptz + make_interval(secs => 1 + g * 86000.0 / ?) as t) c`,
      [day, rows, start, rows],
    );
  };
  for (let i = 0; i < DAYS; i++) await seedDay(dayStart(FIRST_DAY_AGO - i), perDay);
  await seedDay(dayStart(0), recent);
  await knex.raw(`
    create table ${KEYSET_TABLE} (like webhook_attempts including defaults including constraints)
      with (autovacuum_enabled = off);
    insert into ${KEYSET_TABLE} select * from webhook_attempts;
    alter table ${KEYSET_TABLE} add primary key (id);
    create index on ${KEYSET_TABLE} (created);
    create index on ${KEYSET_TABLE} (webhook_id, id desc);
  `);
  await knex.raw(`vacuum analyze webhook_attempts, ${KEYSET_TABLE}`);
  const seedSeconds = (performance.now() - seedStarted) / 1000;
  log(`prune: seeded in ${seedSeconds.toFixed(0)} s`);

  // one connection, so one backend does all the work and its CPU can be read
  const session = createKnex(db.url, { pool: { min: 1, max: 1 } });
  const { rows: backend } = await session.raw<{ rows: { pid: number }[] }>(`select pg_backend_pid() as pid`);
  const pid = backend[0]!.pid;
  const rounds: {
    rows: number;
    keyset: Measured;
    vacuumAfterKeyset: Measured;
    drop: Measured & { partitions: number };
  }[] = [];
  const perRound = DAYS / ROUNDS;
  const rounded = (m: Measured, digits: number): Measured => ({
    ms: round(m.ms, digits),
    backendCpuMs: m.backendCpuMs,
    machineCpuMs: m.machineCpuMs,
    walMb: round(m.walMb, 3),
  });
  for (let r = 0; r < ROUNDS; r++) {
    // the midnight after the last day of this round: rows created before it go
    const cutoff = dayStart(FIRST_DAY_AGO - (r + 1) * perRound);
    const keyset = await measure(session, pid, () => keysetDelete(session, cutoff));
    if (keyset.result !== perRound * perDay) {
      throw new Error(`round ${r + 1}: the keyset delete removed ${keyset.result}, not ${perRound * perDay}`);
    }
    const drop = await measure(session, pid, () =>
      dropExpiredPartitions(session, 'webhook_attempts', { olderThanMs: Date.now() - cutoff.getTime() }),
    );
    // what the delete leaves behind: dead rows and index entries a vacuum must clear before the
    // next run's index scan stops stepping over them (the drop leaves nothing)
    const vacuum = await measure(session, pid, () => session.raw(`vacuum ${KEYSET_TABLE}`));
    if (drop.result.busy.length > 0)
      throw new Error(`round ${r + 1}: partitions left busy: ${drop.result.busy}`);
    const [left, keysetLeft] = await Promise.all(
      ['webhook_attempts', KEYSET_TABLE].map(async (table) =>
        Number((await knex(table).count({ n: '*' }))[0]!.n),
      ),
    );
    if (left !== keysetLeft)
      throw new Error(`round ${r + 1}: ${left} attempts left after the drop, ${keysetLeft} after the delete`);
    log(
      `prune: round ${r + 1}: ${keyset.result} rows, keyset delete ${keyset.ms.toFixed(0)} ms, ` +
        `partition drop ${drop.ms.toFixed(0)} ms (${drop.result.dropped.length} partitions)`,
    );
    rounds.push({
      rows: keyset.result,
      keyset: rounded(keyset, 0),
      vacuumAfterKeyset: rounded(vacuum, 0),
      drop: { ...rounded(drop, 1), partitions: drop.result.dropped.length },
    });
  }
  await session.destroy();
  const sum = (pick: (r: (typeof rounds)[number]) => number) => rounds.reduce((s, r) => s + pick(r), 0);
  return {
    mode: 'prune',
    attempts: perDay * DAYS,
    recentKept: recent,
    seedSeconds: round(seedSeconds, 1),
    rounds,
    keysetSeconds: round(sum((r) => r.keyset.ms) / 1000, 2),
    vacuumSeconds: round(sum((r) => r.vacuumAfterKeyset.ms) / 1000, 2),
    dropSeconds: round(sum((r) => r.drop.ms) / 1000, 3),
    // per round, then the median of the rounds
    speedup: round(median(rounds.map((r) => r.keyset.ms / r.drop.ms)), 1),
    // CPU is counted in 10 ms ticks: a drop that took less than one counts as one
    backendCpuRatio: round(
      median(rounds.map((r) => r.keyset.backendCpuMs / Math.max(r.drop.backendCpuMs, 10))),
      1,
    ),
    machineCpuRatio: round(
      median(rounds.map((r) => r.keyset.machineCpuMs / Math.max(r.drop.machineCpuMs, 10))),
      1,
    ),
    database: cluster.server,
  };
}
