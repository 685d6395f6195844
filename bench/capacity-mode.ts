import { readdirSync, readFileSync } from 'node:fs';
import { setTimeout as sleep } from 'node:timers/promises';
import {
  createKnex,
  ENQUEUE_ENTITY_CHANGE_SQL,
  enqueueBindings,
  enqueueEntityChange,
  listPartitions,
  pruneAttemptStats,
  pruneWebhooksStep,
  type ClaimedWebhook,
  type Knex,
  type PruneStep,
} from '@platform/db';
import { WebhookState } from '@platform/shared';
import { quantile } from '@platform/testkit';
import type { BenchContext } from './context';
import { round } from './drain';
import { CLAIM, claimAsBench, FLUSH, recordSuccesses } from './queue-mode';
import { benchEntity, seedParty, seedRegistration } from './seed';

/**
 * The capacity mode (`pnpm bench --capacity`): what one delivered webhook costs one Postgres, for
 * the arithmetic of docs/scaling.md. No HTTP and no dispatcher process: the real statements, run
 * phase by phase on a fresh database so each phase's cost can be read on its own.
 *
 * - enqueue: one change per transaction through the API's enqueue statement
 *   (`enqueueEntityChange`: the change row, its fan-out and its NOTIFY), on four connections with
 *   synchronous commits, as API processes write;
 * - claim: `claimWebhooks` in batches of 64 until nothing is left to claim, on one connection with
 *   the dispatcher's session settings (asynchronous commit);
 * - complete: `completeWebhooks`, 16 results a flush, every delivery a 200 with its attempt row (a
 *   grouped result releases its group and leases the next webhook, as in production);
 * - vacuum: one VACUUM of the queue's tables once every webhook is delivered (autovacuum is off
 *   for them during the run, so each dead row is vacuumed exactly once, and here);
 * - prune: the retention of `packages/db/src/queue/prune.ts` with a cutoff in the future (every
 *   row old enough): the keyset delete of the finished webhooks, then the drop of the day
 *   partitions of attempts and changes that hold the scenario's rows (the prune job drops only
 *   past days; this is the same detach and drop, on today's), then a VACUUM of what was deleted.
 *
 * Per phase: WAL bytes (`pg_current_wal_lsn` before and after; the full-page images among them
 * from `pg_walinspect`), Postgres CPU (the server's processes, read from /proc), statements and
 * round trips (counted as the driver sends them); at the end of delivery, per table: bytes of heap
 * and indexes added, live and dead rows (`pgstattuple`), inserts, updates and HOT updates. WAL
 * and the server's CPU are the whole cluster's: run on the embedded cluster (no DATABASE_URL),
 * which does nothing else. A CHECKPOINT starts each scenario, so the full-page images are those
 * of a webhook whose life fits in one checkpoint interval (a queue's normal case).
 */

/** The tables a delivered webhook writes to. */
const QUEUE_TABLES = [
  'entity_changes',
  'webhooks',
  'webhook_groups',
  'webhook_attempts',
  'webhook_attempt_stats',
  'webhook_targets',
  'webhook_registrations',
] as const;
type QueueTable = (typeof QUEUE_TABLES)[number];

/** Entities (so groups per grouped registration), as the queue and groups modes use. */
const GROUPS = 100;
/** Connections writing changes at once. */
const WRITERS = 4;
/** Rows per prune statement: the maintenance job's batch (apps/dispatcher PRUNE_BATCH). */
const PRUNE_BATCH = 5_000;
/** USER_HZ: the unit of /proc's utime and cutime (100 on Linux). */
const TICKS_PER_SECOND = 100;

export interface CapacityOptions {
  /** Webhooks per scenario (each scenario writes webhooks / registrations changes). */
  webhooks: number;
}

export async function capacityMode(context: BenchContext, options: CapacityOptions) {
  const scenarios = [];
  for (const grouped of [false, true]) {
    for (const registrations of [1, 10]) {
      scenarios.push(await scenario(context, { grouped, registrations, webhooks: options.webhooks }));
    }
  }
  return { mode: 'capacity', webhooks: options.webhooks, scenarios, database: context.cluster.server };
}

interface Phase {
  walBytes: number;
  fpiBytes: number | null;
  /** WAL of records that touched only other databases' relations, left out of walBytes. */
  otherDatabasesWalBytes: number;
  /** Checkpoints that began during the phase: after one, each page's first change logs the whole page. */
  checkpoints: number;
  /** Every Postgres process's CPU, background ones included; null when the server is not local. */
  databaseCpuMs: number | null;
  /** The client backends of this database alone. */
  backendCpuMs: number | null;
  statements: number;
  roundTrips: number;
  seconds: number;
}

async function scenario(
  context: BenchContext,
  options: { grouped: boolean; registrations: number; webhooks: number },
) {
  const { grouped, registrations } = options;
  const changes = Math.ceil(options.webhooks / registrations);
  const webhooks = changes * registrations;
  const name = `${grouped ? 'grouped' : 'ungrouped'}, ${registrations} registration${registrations > 1 ? 's' : ''}`;
  const db = await context.cluster.create(`capacity_${grouped ? 'g' : 'u'}${registrations}`);
  // the measuring session; its own statements are not counted
  const probe = createKnex(db.url, { pool: { min: 1, max: 1 }, applicationName: 'platform-bench-probe' });
  const writers = counted(
    createKnex(db.url, { pool: { min: WRITERS, max: WRITERS }, applicationName: 'platform-bench' }),
  );
  // the dispatcher's session settings, as the queue mode
  const dispatcher = counted(
    createKnex(db.url, {
      pool: { min: 1, max: 1 },
      synchronousCommit: false,
      applicationName: 'platform-bench',
    }),
  );
  try {
    await probe.raw('create extension if not exists pg_walinspect');
    await probe.raw('create extension if not exists pgstattuple');
    const partyId = await seedParty(db.knex);
    for (let i = 0; i < registrations; i++) {
      await seedRegistration(db.knex, {
        partyId,
        // an origin each: each registration its own target, as separate customers' endpoints are
        targetUrl: `http://127.0.0.1:${10_000 + i}/`,
        shouldGroup: grouped,
        secrets: context.secrets,
        signingSecret: context.signingSecret,
      });
    }
    for (const table of QUEUE_TABLES) {
      for (const leaf of await leaves(probe, table)) {
        await probe.raw(`alter table ?? set (autovacuum_enabled = off)`, [leaf]);
      }
    }
    await probe.raw('analyze');
    // open every session before the clock, so connecting is not measured
    await Promise.all(Array.from({ length: WRITERS }, () => writers.knex.raw('select pg_sleep(0.01)')));
    await dispatcher.knex.raw('select 1');
    await probe.raw('checkpoint');
    const meter = await openMeter(probe);
    const before = await tableFigures(probe, false);

    context.log(`capacity (${name}): enqueueing ${changes} changes, ${webhooks} webhooks`);
    const at = new Date().toISOString();
    const enqueue = await meter.phase([writers], async () => {
      let next = 0;
      const writer = async () => {
        for (let i = next++; i < changes; i = next++) {
          const entityId = grouped ? (i % GROUPS) + 1 : i + 1;
          await writers.knex.transaction((trx) =>
            enqueueEntityChange(trx, {
              entityName: 'Property',
              type: 2,
              entityId,
              entity: benchEntity(entityId, i, partyId, at),
              initiatorPartyId: partyId,
              initiatorAccountId: null,
            }),
          );
        }
      };
      await Promise.all(Array.from({ length: WRITERS }, writer));
    });

    context.log(`capacity (${name}): claiming`);
    const buffer: ClaimedWebhook[] = [];
    const claim = await meter.phase([dispatcher], async () => {
      for (;;) {
        const leased = await claimAsBench(dispatcher.knex, CLAIM);
        if (leased.length === 0) break;
        buffer.push(...leased);
      }
    });

    context.log(`capacity (${name}): completing ${buffer.length} claimed (and what their releases lease)`);
    let delivered = 0;
    const complete = await meter.phase([dispatcher], async () => {
      while (buffer.length > 0) {
        const { applied, leased } = await recordSuccesses(dispatcher.knex, buffer.splice(0, FLUSH));
        delivered += applied.length;
        buffer.push(...leased);
      }
    });
    const successful = await count(
      probe,
      `select count(*) from webhooks where state = ${WebhookState.Successful}`,
    );
    const attempts = await count(probe, 'select count(*) from webhook_attempts');
    if (delivered !== webhooks || successful !== webhooks || attempts !== webhooks) {
      throw new Error(
        `capacity (${name}): ${delivered} results applied, ${successful} Successful, ${attempts} attempts of ${webhooks}`,
      );
    }
    // the sessions' table counters reach the shared statistics when they next go idle
    await flushStatistics([writers, dispatcher]);
    const delivery = await tableFigures(probe, true);
    // before the prune, which drops the partitions its rolled-back insert needs
    const enqueuePlan = await explainEnqueue(writers.knex, partyId, grouped);

    context.log(`capacity (${name}): vacuum`);
    const vacuum = await meter.phase([dispatcher], () => vacuumQueue(dispatcher.knex));

    context.log(
      `capacity (${name}): prune (webhooks by keyset, attempts and changes by partition), then vacuum`,
    );
    const pruned = { attempts: 0, webhooks: 0, entityChanges: 0 };
    const prune = await meter.phase([dispatcher], async () => {
      // a cutoff in the future: every row is old enough
      const olderThanMs = -3_600_000;
      while ((await pruneAttemptStats(dispatcher.knex, { olderThanMs, limit: PRUNE_BATCH })) === PRUNE_BATCH);
      pruned.webhooks = await keyset((after) =>
        pruneWebhooksStep(dispatcher.knex, { olderThanMs, after, scan: PRUNE_BATCH }),
      );
      // the scenario's database ends here, so today's partitions may go as a past day's would
      for (const table of ['webhook_attempts', 'entity_changes'] as const) {
        for (const partition of await listPartitions(dispatcher.knex, table)) {
          await dispatcher.knex.raw('alter table ?? detach partition ??', [table, partition.name]);
          await dispatcher.knex.raw('drop table ??', [partition.name]);
        }
      }
    });
    pruned.entityChanges = changes - (await count(probe, 'select count(*) from entity_changes'));
    pruned.attempts = webhooks - (await count(probe, 'select count(*) from webhook_attempts'));
    const pruneVacuum = await meter.phase([dispatcher], () => vacuumQueue(dispatcher.knex));
    const phases = { enqueue, claim, complete, vacuum, prune, pruneVacuum };

    const per = (value: number | null, digits = 1) =>
      value === null ? null : round(value / webhooks, digits);
    const perPhase = (pick: (phase: Phase) => number | null, digits = 1) =>
      Object.fromEntries(
        Object.entries(phases).map(([key, phase]) => [key, per(pick(phase), digits)]),
      ) as Record<keyof typeof phases, number | null>;
    const delivering = [enqueue, claim, complete];
    const sum = (pick: (phase: Phase) => number | null) =>
      delivering.some((p) => pick(p) === null) ? null : delivering.reduce((total, p) => total + pick(p)!, 0);
    /** Per phase, and `delivered`: the three phases of a delivery together (null if one is). */
    const withDelivered = (pick: (phase: Phase) => number | null, digits: number) => ({
      ...perPhase(pick, digits),
      delivered: per(sum(pick), digits),
    });
    const tables = {} as Record<QueueTable, Record<keyof TableFigures, number | null>>;
    for (const table of QUEUE_TABLES) {
      const [b, d] = [before[table], delivery[table]];
      tables[table] = {
        heapBytes: per(d.heapBytes - b.heapBytes, 0),
        indexBytes: per(d.indexBytes - b.indexBytes, 0),
        liveRows: per(d.liveRows, 3),
        // dead versions not yet pruned; a pruned one still leaves its index entries to vacuum
        deadTuples: per(d.deadTuples, 3),
        inserts: per(d.inserts - b.inserts, 3),
        updates: per(d.updates - b.updates, 3),
        hotUpdates: per(d.hotUpdates - b.hotUpdates, 3),
      };
    }
    const result = {
      grouped,
      registrations,
      changes,
      webhooks,
      pruned,
      enqueuePlan,
      perWebhook: {
        walBytes: withDelivered((p) => p.walBytes, 0),
        fpiBytes: withDelivered((p) => p.fpiBytes, 0),
        databaseCpuMs: withDelivered((p) => p.databaseCpuMs, 4),
        backendCpuMs: withDelivered((p) => p.backendCpuMs, 4),
        otherDatabasesWalBytes: perPhase((p) => p.otherDatabasesWalBytes, 0),
        statements: perPhase((p) => p.statements, 3),
        roundTrips: perPhase((p) => p.roundTrips, 3),
      },
      checkpoints: Object.fromEntries(Object.entries(phases).map(([key, phase]) => [key, phase.checkpoints])),
      seconds: Object.fromEntries(
        Object.entries(phases).map(([key, phase]) => [key, round(phase.seconds, 3)]),
      ),
      tables,
    };
    context.log(
      `capacity (${name}): per webhook ${result.perWebhook.walBytes.delivered} B of WAL ` +
        `(enqueue ${result.perWebhook.walBytes.enqueue}, claim ${result.perWebhook.walBytes.claim}, ` +
        `complete ${result.perWebhook.walBytes.complete}), ${result.perWebhook.databaseCpuMs.delivered} ms of Postgres CPU`,
    );
    return result;
  } finally {
    await Promise.all([probe.destroy(), writers.knex.destroy(), dispatcher.knex.destroy()]);
  }
}

/** A knex whose round trips are counted: every query it sends, BEGIN and COMMIT included. */
interface Counted {
  knex: Knex;
  roundTrips: number;
  statements: number;
}

function counted(knex: Knex): Counted {
  const tally: Counted = { knex, roundTrips: 0, statements: 0 };
  knex.on('query', (query: { sql: string }) => {
    tally.roundTrips++;
    if (!/^\s*(begin|commit|rollback)\b/i.test(query.sql)) tally.statements++;
  });
  return tally;
}

/** Measures phases: WAL, the server's CPU, and the round trips of the sessions that did the work. */
async function openMeter(probe: Knex) {
  const probePid = await count(probe, 'select pg_backend_pid()');
  const postmaster = parentOf(probePid);
  const backends = async () =>
    (
      await probe.raw<{ rows: { pid: number }[] }>(
        `select pid from pg_stat_activity
          where datname = current_database() and backend_type = 'client backend' and pid <> pg_backend_pid()`,
      )
    ).rows.map((row) => row.pid);
  // pg_stat_checkpointer from Postgres 17, pg_stat_bgwriter before
  const checkpointer =
    (await count(probe, `select to_regclass('pg_catalog.pg_stat_checkpointer') is not null`)) === 1;
  const checkpoints = () =>
    count(
      probe,
      checkpointer
        ? 'select num_timed + num_requested from pg_stat_checkpointer'
        : 'select checkpoints_timed + checkpoints_req from pg_stat_bgwriter',
    );
  const lsn = async () =>
    (await probe.raw<{ rows: { lsn: string }[] }>('select pg_current_wal_insert_lsn()::text as lsn')).rows[0]!
      .lsn;
  // pg_get_wal_block_info (Postgres 16+) names each block's database
  const blockInfo =
    (await count(
      probe,
      `select to_regprocedure('pg_get_wal_block_info(pg_lsn,pg_lsn,boolean)') is not null`,
    )) === 1;
  /**
   * Sets the phase's full-page-image bytes, and takes out of its WAL the records that only touched
   * other databases (another mode's leftover tables being autovacuumed meanwhile, another
   * session's work on a shared server). Commit records name no block and stay counted.
   */
  const attributeWal = async (phase: Phase, from: string, to: string) => {
    if (from === to) return;
    try {
      if (!blockInfo) {
        phase.fpiBytes = await count(
          probe,
          `select coalesce(sum(fpi_size), 0) from pg_get_wal_stats('${from}', '${to}')`,
        );
        return;
      }
      const { rows } = await probe.raw<{ rows: { others: string; fpi: string }[] }>(
        `with blocks as (
           select start_lsn, record_length, block_fpi_length,
                  reldatabase in (0, (select oid from pg_database where datname = current_database())) as ours
             from pg_get_wal_block_info('${from}', '${to}')
         ),
         records as (
           select start_lsn, max(record_length) as record_length, bool_or(ours) as ours from blocks group by start_lsn
         )
         select (select coalesce(sum(record_length), 0) from records where not ours) as others,
                (select coalesce(sum(block_fpi_length), 0) from blocks where ours) as fpi`,
      );
      phase.otherDatabasesWalBytes = Number(rows[0]!.others);
      phase.walBytes -= phase.otherDatabasesWalBytes;
      phase.fpiBytes = Number(rows[0]!.fpi);
    } catch {
      // a shared server's checkpoints may have recycled the phase's first segments already:
      // the split is then unknown, the volume still measured
      phase.fpiBytes = null;
    }
  };
  return {
    async phase(sessions: Counted[], work: () => Promise<unknown>): Promise<Phase> {
      const pids = await backends();
      const trips = sessions.map((s) => [s.roundTrips, s.statements] as const);
      const cpu0 = postmaster === null ? null : [clusterCpuNs(postmaster), sumCpuNs(pids)];
      const checkpoints0 = await checkpoints();
      const from = await lsn();
      const started = performance.now();
      await work();
      const seconds = (performance.now() - started) / 1000;
      const to = await lsn();
      const cpu1 = postmaster === null ? null : [clusterCpuNs(postmaster), sumCpuNs(pids)];
      const walBytes = await count(probe, `select pg_wal_lsn_diff('${to}', '${from}')`);
      const phase: Phase = {
        walBytes,
        fpiBytes: 0,
        otherDatabasesWalBytes: 0,
        checkpoints: (await checkpoints()) - checkpoints0,
        databaseCpuMs: cpu0 && cpu1 ? (cpu1[0]! - cpu0[0]!) / 1e6 : null,
        backendCpuMs: cpu0 && cpu1 ? (cpu1[1]! - cpu0[1]!) / 1e6 : null,
        roundTrips: sessions.reduce((total, s, i) => total + s.roundTrips - trips[i]![0], 0),
        statements: sessions.reduce((total, s, i) => total + s.statements - trips[i]![1], 0),
        seconds,
      };
      // pg_walinspect reads only flushed WAL; asynchronous commits reach the disk within
      // wal_writer_delay. Read now: a later checkpoint may recycle the segments.
      while ((await count(probe, `select pg_wal_lsn_diff(pg_current_wal_flush_lsn(), '${to}')`)) < 0) {
        await sleep(20);
      }
      await attributeWal(phase, from, to);
      return phase;
    },
  };
}

/** The postmaster of a local backend, or null when the server's processes are not visible here. */
function parentOf(pid: number): number | null {
  try {
    return statFields(pid)[1]!;
  } catch {
    return null;
  }
}

/** /proc/<pid>/stat from the state field on (the name before it may hold spaces): [state, ppid, …]. */
function statFields(pid: number): number[] {
  const text = readFileSync(`/proc/${pid}/stat`, 'utf8');
  return text
    .slice(text.lastIndexOf(')') + 2)
    .split(' ')
    .map(Number);
}

/** CPU time a live process has run, in ns (/proc/<pid>/schedstat); 0 once it is gone. */
function cpuNs(pid: number): number {
  try {
    return Number(readFileSync(`/proc/${pid}/schedstat`, 'utf8').split(' ')[0]);
  } catch {
    return 0;
  }
}

const sumCpuNs = (pids: number[]) => pids.reduce((total, pid) => total + cpuNs(pid), 0);

/**
 * CPU of the whole server: the postmaster, its live children (backends, WAL writer, checkpointer,
 * autovacuum, …) and, through the postmaster's cutime + cstime, the children that have exited.
 */
function clusterCpuNs(postmaster: number): number {
  const children: number[] = [];
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      if (statFields(Number(entry))[1] === postmaster) children.push(Number(entry));
    } catch {
      // exited while we looked
    }
  }
  // fields after the name: state(0) ppid(1) … utime(11) stime(12) cutime(13) cstime(14)
  const fields = statFields(postmaster);
  const reaped = ((fields[13]! + fields[14]!) / TICKS_PER_SECOND) * 1e9;
  return cpuNs(postmaster) + reaped + sumCpuNs(children);
}

/** Makes the sessions publish their table counters (they do so at most once a second when idle). */
async function flushStatistics(sessions: Counted[]) {
  for (const session of sessions) {
    const size = (session.knex.client as { pool: { max: number } }).pool.max;
    await Promise.all(
      Array.from({ length: size }, () =>
        session.knex.raw('select pg_stat_force_next_flush(), pg_sleep(0.05)'),
      ),
    );
    await Promise.all(Array.from({ length: size }, () => session.knex.raw('select pg_sleep(0.05)')));
  }
}

/** The leaf tables of `table`; itself when it is not partitioned (pg_partition_tree lists nothing then). */
async function leaves(knex: Knex, table: string): Promise<string[]> {
  const { rows } = await knex.raw<{ rows: { name: string }[] }>(
    `select relid::regclass::text as name from pg_partition_tree(?::regclass) where isleaf`,
    [table],
  );
  return rows.length > 0 ? rows.map((row) => row.name) : [table];
}

interface TableFigures {
  heapBytes: number;
  indexBytes: number;
  liveRows: number;
  deadTuples: number;
  inserts: number;
  updates: number;
  hotUpdates: number;
}

/** Per queue table (summed over its partitions): sizes, cumulative counters and, when asked, exact row counts. */
async function tableFigures(knex: Knex, rows: boolean): Promise<Record<QueueTable, TableFigures>> {
  await knex.raw('select pg_stat_clear_snapshot()');
  const figures = {} as Record<QueueTable, TableFigures>;
  for (const table of QUEUE_TABLES) {
    const total: TableFigures = {
      heapBytes: 0,
      indexBytes: 0,
      liveRows: 0,
      deadTuples: 0,
      inserts: 0,
      updates: 0,
      hotUpdates: 0,
    };
    for (const leaf of await leaves(knex, table)) {
      const { rows: found } = await knex.raw<{ rows: Record<string, string | number>[] }>(
        `select pg_table_size(c.oid) as heap_bytes, pg_indexes_size(c.oid) as index_bytes,
                s.n_tup_ins as inserts, s.n_tup_upd as updates, s.n_tup_hot_upd as hot_updates
                ${rows ? ', t.tuple_count as live_rows, t.dead_tuple_count as dead_rows' : ''}
           from pg_class c
           join pg_stat_user_tables s on s.relid = c.oid
           ${rows ? 'cross join lateral pgstattuple(c.oid) t' : ''}
          where c.oid = ?::regclass`,
        [leaf],
      );
      const row = found[0]!;
      total.heapBytes += Number(row.heap_bytes);
      total.indexBytes += Number(row.index_bytes);
      total.inserts += Number(row.inserts);
      total.updates += Number(row.updates);
      total.hotUpdates += Number(row.hot_updates);
      total.liveRows += Number(row.live_rows ?? 0);
      total.deadTuples += Number(row.dead_rows ?? 0);
    }
    figures[table] = total;
  }
  return figures;
}

/** Explained enqueues of one change, each rolled back. */
const EXPLAINED = 50;

/**
 * Where an enqueue's time goes inside Postgres: the median planning and execution time of the
 * enqueue statement as sent (unprepared, so planned every time), over `EXPLAINED` changes, from
 * EXPLAIN (ANALYZE, SUMMARY) in a transaction that is rolled back.
 */
async function explainEnqueue(knex: Knex, partyId: number, grouped: boolean) {
  const planning: number[] = [];
  const execution: number[] = [];
  const at = new Date().toISOString();
  for (let i = 0; i < EXPLAINED; i++) {
    const entityId = grouped ? (i % GROUPS) + 1 : 1_000_000 + i;
    const bindings = enqueueBindings({
      entityName: 'Property',
      type: 2,
      entityId,
      entity: benchEntity(entityId, i, partyId, at),
      initiatorPartyId: partyId,
      initiatorAccountId: null,
    });
    const trx = await knex.transaction();
    try {
      const { rows } = await trx.raw<{
        rows: { 'QUERY PLAN': { 'Planning Time': number; 'Execution Time': number }[] }[];
      }>(`explain (analyze, summary, format json) ${ENQUEUE_ENTITY_CHANGE_SQL}`, bindings);
      planning.push(rows[0]!['QUERY PLAN'][0]!['Planning Time']);
      execution.push(rows[0]!['QUERY PLAN'][0]!['Execution Time']);
    } finally {
      await trx.rollback();
    }
  }
  const median = (values: number[]) =>
    round(
      quantile(
        [...values].sort((a, b) => a - b),
        0.5,
      ),
      3,
    );
  return { planningMs: median(planning), executionMs: median(execution) };
}

const vacuumQueue = (knex: Knex) => knex.raw(`vacuum ${QUEUE_TABLES.join(', ')}`);

/** Runs keyset steps from id 0 until one says it is done; answers the rows deleted. */
async function keyset(step: (after: number) => Promise<PruneStep>): Promise<number> {
  let after = 0;
  let deleted = 0;
  for (;;) {
    const result = await step(after);
    deleted += result.deleted;
    after = result.lastId;
    if (result.done) return deleted;
  }
}

async function count(knex: Knex, sql: string): Promise<number> {
  const { rows } = await knex.raw<{ rows: Record<string, unknown>[] }>(sql);
  return Number(Object.values(rows[0]!)[0]);
}
