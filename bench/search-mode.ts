import { createKnex, enqueueEntityChange, type ClaimedWebhook, type Knex } from '@platform/db';
import { PartyType, TokenScope, WEBHOOK_SEARCH_COUNT_CAP } from '@platform/shared';
import { benchEntity } from '@platform/testkit';
import type { Principal } from '../apps/api/src/auth/principal';
import { WebhookListQuery, webhookListQuery } from '../apps/api/src/features/webhooks/webhook-service';
import { pageSql } from '../apps/api/src/http/pagination';
import type { BenchContext } from './context';
import { round } from './drain';
import { claimAsBench, CLAIM, FLUSH, recordSuccesses } from './queue-mode';
import { processCpuMs } from './processes';
import { seedBacklog, seedParty, seedRegistration } from './seed';

/** The index the search reads (migration 20261202500000_payload_words). */
const INDEX = 'entity_changes_payload_words';
const CREATE_INDEX = `create index ${INDEX} on entity_changes using gin (jsonb_to_tsvector('simple', entity, '["string"]'))`;
/** A string found in exactly one payload, as an operator pastes a reference from a support ticket. */
const NEEDLE = 'ZX-48213-Mietminderung';
/** A word in every seeded payload (its street). */
const COMMON = 'Benchmarkstraße';
/** Searches before timing starts (plans, pages warm). */
const WARMUP = 5;

/** Admin: sees every webhook, so the statement is the API's with no scope narrowing it. */
const ADMIN: Principal = {
  accountId: 1,
  partyId: 1,
  partyName: 'Bench Admin',
  partyType: PartyType.Admin,
  email: 'bench@example.com',
  scope: TokenScope.Platform,
  permissions: new Set(),
};

const percentile = (sorted: number[], p: number) =>
  sorted[Math.min(sorted.length - 1, Math.floor(p * sorted.length))]!;

const median = (samples: number[]) =>
  percentile(
    [...samples].sort((a, b) => a - b),
    0.5,
  );

/**
 * The first page (20, newest first) of GET /api/webhooks?q=…, as the API sends it
 * (`listWebhooks`): one statement, its count capped.
 */
function searchStatement(knex: Knex, q: string) {
  const list = WebhookListQuery.parse({ q, PageSize: '20' });
  return pageSql(webhookListQuery(knex, ADMIN, list), list.PageSize, 0, WEBHOOK_SEARCH_COUNT_CAP);
}

/** The plan of the search's page statement, run (EXPLAIN ANALYZE). */
async function explain(knex: Knex, q: string): Promise<string[]> {
  const { sql, bindings } = searchStatement(knex, q);
  const { rows } = await knex.raw<{ rows: { 'QUERY PLAN': string }[] }>(
    `explain (analyze, buffers, costs off) ${sql}`,
    [...bindings] as Knex.RawBinding[],
  );
  return rows.map((row) => row['QUERY PLAN']);
}

const executionMs = (plan: string[]) =>
  Number(/([\d.]+) ms/.exec(plan.find((line) => line.startsWith('Execution Time')) ?? '')?.[1]);

async function timedSearch(knex: Knex, q: string): Promise<{ ms: number; total: number }> {
  const { sql, bindings } = searchStatement(knex, q);
  const started = performance.now();
  const { rows } = await knex.raw<{ rows: { page_total_count: string }[] }>(sql, [
    ...bindings,
  ] as Knex.RawBinding[]);
  return { ms: performance.now() - started, total: Number(rows[0]?.page_total_count ?? 0) };
}

/**
 * The search (docs/performance.md › Search): `webhooks` webhooks, each of its own change with a
 * ~1 KB Property payload (`seedBacklog`), one of them carrying NEEDLE in its notes; the full-text
 * index built after the seed (its build time reported). Then `searches` timed runs of the API's
 * own page statement for NEEDLE (median, p95), one for a word in every payload (COMMON: a
 * million matches, the search's worst case, its count capped), and the plan of the NEEDLE
 * search (EXPLAIN ANALYZE, logged and returned; those of an id and of COMMON logged).
 */
export async function searchMode(context: BenchContext, options: { webhooks: number; searches: number }) {
  const { cluster, log } = context;
  const db = await cluster.create('search');
  const partyId = await seedParty(db.knex);
  const registration = await seedRegistration(db.knex, {
    partyId,
    targetUrl: context.target.url,
    shouldGroup: false,
    secrets: context.secrets,
    signingSecret: context.signingSecret,
  });
  log(`search: seeding ${options.webhooks} webhooks, each with its own payload`);
  const seedStarted = performance.now();
  // built once after the rows, as a migration on a filled table builds it
  await db.knex.raw(`drop index ${INDEX}`);
  await seedBacklog(db.knex, registration, options.webhooks);
  await db.knex.raw(
    `update entity_changes set entity = jsonb_set(entity, '{notes}', to_jsonb(:notes::text))
      where id = (select id from entity_changes order by id offset :middle limit 1)`,
    { notes: `Tenant reports ${NEEDLE}, see ticket`, middle: Math.floor(options.webhooks / 2) },
  );
  const seedSeconds = (performance.now() - seedStarted) / 1000;
  log('search: building the full-text index');
  const indexStarted = performance.now();
  await db.knex.raw(CREATE_INDEX);
  const indexSeconds = (performance.now() - indexStarted) / 1000;
  await db.knex.raw('vacuum analyze entity_changes, webhooks');
  // a partitioned index has no storage of its own: its partitions' indexes hold it
  const { rows: sizes } = await db.knex.raw<{ rows: { index_bytes: string }[] }>(
    `select sum(pg_relation_size(relid)) as index_bytes from pg_partition_tree(?::regclass)`,
    [INDEX],
  );

  const samples: number[] = [];
  let found = 0;
  for (let i = 0; i < WARMUP + options.searches; i++) {
    const run = await timedSearch(db.knex, NEEDLE.toLowerCase());
    if (i >= WARMUP) samples.push(run.ms);
    found = run.total;
  }
  const idText = String(Math.floor(options.webhooks / 3));
  const idSearch = await timedSearch(db.knex, idText);
  const common = await timedSearch(db.knex, COMMON);
  const plan = await explain(db.knex, NEEDLE.toLowerCase());
  log(`search: the page of "${NEEDLE}" among ${options.webhooks}:\n  ${plan.join('\n  ')}`);
  const idPlan = await explain(db.knex, idText);
  log(`search: the page of "${idText}" (ids and payload):\n  ${idPlan.join('\n  ')}`);
  const commonPlan = await explain(db.knex, COMMON);
  log(`search: the page of "${COMMON}" (in every payload):\n  ${commonPlan.join('\n  ')}`);
  await db.drop();
  const sorted = [...samples].sort((a, b) => a - b);
  return {
    mode: 'search',
    webhooks: options.webhooks,
    needle: NEEDLE,
    found,
    samples: samples.length,
    medianMs: round(percentile(sorted, 0.5), 2),
    p95Ms: round(percentile(sorted, 0.95), 2),
    executionMs: Number(
      /([\d.]+) ms/.exec(plan.find((line) => line.startsWith('Execution Time')) ?? '')?.[1],
    ),
    /** A whole number: webhook, change and entity ids, and the payload text. */
    idSearchMs: round(idSearch.ms, 2),
    idExecutionMs: executionMs(idPlan),
    /** A word in every payload: its count stops past WEBHOOK_SEARCH_COUNT_CAP (found: the cap + 1). */
    commonStringMs: round(common.ms, 1),
    commonStringFound: common.total,
    commonExecutionMs: executionMs(commonPlan),
    seedSeconds: round(seedSeconds, 1),
    indexBuildSeconds: round(indexSeconds, 1),
    indexMegabytes: round(Number(sizes[0]!.index_bytes) / 1e6, 1),
    plan,
    database: cluster.server,
  };
}

/** Concurrent writers of the enqueue run, as the API's pool writes. */
const WRITERS = 4;
/** Changes enqueued in one variant's database before the other's takes its turn. */
const ENQUEUE_CHUNK = 1_000;

type Variant = 'without' | 'with';

/** One variant's database of a round, filled and ready, with its writers' pool. */
interface CostDatabase {
  variant: Variant;
  db: Awaited<ReturnType<BenchContext['cluster']['create']>>;
  partyId: number;
  writers: Knex;
  /** The writers' backends (their CPU is read from /proc). */
  writerPids: number[];
  enqueueSeconds: number;
  enqueueCpuMs: number;
}

/** Changes `from`…`from + count - 1` through the real enqueue statement, one transaction each, on WRITERS connections. */
async function timedEnqueue(target: CostDatabase, from: number, count: number): Promise<void> {
  const at = new Date().toISOString();
  let next = from;
  const end = from + count;
  const cpuBefore = await backendsCpuMs(target.writerPids);
  const started = performance.now();
  const writer = async () => {
    for (let i = next++; i < end; i = next++) {
      await target.writers.transaction((trx) =>
        enqueueEntityChange(trx, {
          entityName: 'Property',
          type: 2,
          entityId: i + 1,
          entity: benchEntity(i + 1, i, target.partyId, at),
          initiatorPartyId: target.partyId,
          initiatorAccountId: null,
        }),
      );
    }
  };
  await Promise.all(Array.from({ length: WRITERS }, writer));
  target.enqueueSeconds += (performance.now() - started) / 1000;
  target.enqueueCpuMs += (await backendsCpuMs(target.writerPids)) - cpuBefore;
}

/** One variant's drain, run in chunks: the claimed webhooks not yet completed carry over. */
interface Drainer {
  knex: Knex;
  pid: number;
  buffer: ClaimedWebhook[];
  done: number;
  seconds: number;
  cpuMs: number;
}

async function startDrainer(url: string): Promise<Drainer> {
  const knex = createKnex(url, {
    pool: { max: 1 },
    synchronousCommit: false,
    applicationName: 'platform-bench',
  });
  const { rows } = await knex.raw<{ rows: { pid: number }[] }>('select pg_backend_pid() as pid');
  return { knex, pid: rows[0]!.pid, buffer: [], done: 0, seconds: 0, cpuMs: 0 };
}

/** Drains until `upTo` webhooks are done, by the queue mode's loop (`drainWithoutHttp`'s statements). */
async function drainChunk(drainer: Drainer, upTo: number): Promise<void> {
  const cpuBefore = await processCpuMs(drainer.pid);
  const started = performance.now();
  while (drainer.done < upTo) {
    if (drainer.buffer.length < CLAIM / 2) {
      drainer.buffer.push(...(await claimAsBench(drainer.knex, CLAIM - drainer.buffer.length)));
    }
    const batch = drainer.buffer.splice(0, FLUSH);
    if (batch.length === 0) throw new Error(`nothing left to claim after ${drainer.done}`);
    const { applied, leased } = await recordSuccesses(drainer.knex, batch);
    drainer.done += applied.length;
    drainer.buffer.push(...leased);
  }
  drainer.seconds += (performance.now() - started) / 1000;
  drainer.cpuMs += (await processCpuMs(drainer.pid)) - cpuBefore;
}

async function backendsCpuMs(pids: number[]): Promise<number> {
  let total = 0;
  for (const pid of pids) total += await processCpuMs(pid);
  return total;
}

/**
 * What the search index costs the write and the delivery path (docs/performance.md › Search):
 * `rounds` rounds, each with two fresh databases holding `preload` changes (the index's size
 * matters to its inserts), one without the search index and one with it. Both are filled first;
 * then `changes` changes go through the real enqueue statement (4 writers, a transaction each) in
 * chunks of ENQUEUE_CHUNK alternating between the two databases (interleaved finely, so both see
 * the same machine: it is shared, and its load swings within a minute), then their webhooks are
 * drained by the real claim and completion statements on one connection each (the queue mode's
 * loop), ENQUEUE_CHUNK at a time alternating between the two in the same way.
 * Rates per round and variant, their medians and ratios, and the backends' CPU per item (less
 * sensitive to other load than the rates).
 */
export async function searchCostMode(
  context: BenchContext,
  options: { changes: number; preload: number; rounds: number },
) {
  const { cluster, log } = context;
  type Run = {
    enqueuePerSecond: number;
    drainPerSecond: number;
    enqueueCpuMsPerChange: number;
    drainCpuMsPerWebhook: number;
  };
  const runs: Record<Variant, Run[]> = { without: [], with: [] };
  for (let round_ = 0; round_ < options.rounds; round_++) {
    const order: Variant[] = round_ % 2 === 0 ? ['without', 'with'] : ['with', 'without'];
    const databases: CostDatabase[] = [];
    try {
      for (const variant of order) {
        const db = await cluster.create(`search_cost_${variant}_${round_}`);
        const partyId = await seedParty(db.knex);
        const registration = await seedRegistration(db.knex, {
          partyId,
          targetUrl: 'http://127.0.0.1:9/',
          shouldGroup: false,
          secrets: context.secrets,
          signingSecret: context.signingSecret,
        });
        await db.knex.raw(`drop index ${INDEX}`);
        if (options.preload > 0) {
          log(`search-cost round ${round_ + 1}, ${variant} the index: preloading ${options.preload}`);
          await seedBacklog(db.knex, registration, options.preload);
          // delivered long ago: the preload sizes the tables and the index, the drain leaves it alone
          await db.knex.raw(`update webhooks set state = 3, completed_at = now()`);
        }
        if (variant === 'with') await db.knex.raw(CREATE_INDEX);
        await db.knex.raw('vacuum analyze');
        await db.knex.raw('checkpoint');
        const writers = createKnex(db.url, {
          pool: { min: WRITERS, max: WRITERS },
          applicationName: 'platform-bench',
        });
        databases.push({ variant, db, partyId, writers, writerPids: [], enqueueSeconds: 0, enqueueCpuMs: 0 });
      }
      for (const target of databases) {
        // every writer connected before the clock starts, and its backend known
        const pids = await Promise.all(
          Array.from({ length: WRITERS }, () =>
            target.writers.transaction(async (trx) => {
              const { rows } = await trx.raw<{ rows: { pid: number }[] }>(
                'select pg_backend_pid() as pid, pg_sleep(0.05)',
              );
              return rows[0]!.pid;
            }),
          ),
        );
        target.writerPids = [...new Set(pids)];
      }
      log(
        `search-cost round ${round_ + 1}: enqueueing ${options.changes} into each, ${ENQUEUE_CHUNK} at a time in turn`,
      );
      for (let from = 0, turn = 0; from < options.changes; from += ENQUEUE_CHUNK, turn++) {
        const count = Math.min(ENQUEUE_CHUNK, options.changes - from);
        for (const target of turn % 2 === 0 ? databases : [...databases].reverse()) {
          await timedEnqueue(target, from, count);
        }
      }
      for (const target of databases) await target.writers.destroy();
      log(`search-cost round ${round_ + 1}: draining each, ${ENQUEUE_CHUNK} at a time in turn`);
      const drainers = await Promise.all(databases.map((target) => startDrainer(target.db.url)));
      try {
        for (let upTo = ENQUEUE_CHUNK, turn = 0; ; upTo += ENQUEUE_CHUNK, turn++) {
          const goal = Math.min(upTo, options.changes);
          for (const drainer of turn % 2 === 0 ? drainers : [...drainers].reverse()) {
            await drainChunk(drainer, goal);
          }
          if (goal === options.changes) break;
        }
      } finally {
        for (const drainer of drainers) await drainer.knex.destroy();
      }
      databases.forEach((target, i) => {
        const drainer = drainers[i]!;
        runs[target.variant].push({
          enqueuePerSecond: round(options.changes / target.enqueueSeconds, 0),
          drainPerSecond: round(drainer.done / drainer.seconds, 0),
          enqueueCpuMsPerChange: round(target.enqueueCpuMs / options.changes, 3),
          drainCpuMsPerWebhook: round(drainer.cpuMs / drainer.done, 3),
        });
      });
    } finally {
      for (const target of databases) await target.db.drop();
    }
    const [without, withIndex] = [runs.without.at(-1)!, runs.with.at(-1)!];
    log(
      `search-cost round ${round_ + 1}: enqueue ${without.enqueuePerSecond} → ${withIndex.enqueuePerSecond}/s ` +
        `(${round(withIndex.enqueuePerSecond / without.enqueuePerSecond, 3)}), drain ${without.drainPerSecond} → ` +
        `${withIndex.drainPerSecond}/s (${round(withIndex.drainPerSecond / without.drainPerSecond, 3)})`,
    );
  }
  const summary = (variant: Variant) => ({
    enqueuePerSecond: median(runs[variant].map((run) => run.enqueuePerSecond)),
    drainPerSecond: median(runs[variant].map((run) => run.drainPerSecond)),
    enqueueCpuMsPerChange: median(runs[variant].map((run) => run.enqueueCpuMsPerChange)),
    drainCpuMsPerWebhook: median(runs[variant].map((run) => run.drainCpuMsPerWebhook)),
    runs: runs[variant],
  });
  const ratios = (key: keyof Run) => runs.with.map((run, i) => round(run[key] / runs.without[i]![key], 3));
  const without = summary('without');
  const withIndex = summary('with');
  return {
    mode: 'search-cost',
    changes: options.changes,
    preload: options.preload,
    rounds: options.rounds,
    without,
    with: withIndex,
    /** with ÷ without of each round: 0.9 means the index costs 10 %. */
    enqueueRatios: ratios('enqueuePerSecond'),
    drainRatios: ratios('drainPerSecond'),
    /** The medians of the rounds' ratios. */
    enqueueRatio: median(ratios('enqueuePerSecond')),
    drainRatio: median(ratios('drainPerSecond')),
    /** CPU with ÷ without (above 1: the index costs CPU), medians of the rounds'. */
    enqueueCpuRatio: median(ratios('enqueueCpuMsPerChange')),
    drainCpuRatio: median(ratios('drainCpuMsPerWebhook')),
    database: cluster.server,
  };
}
