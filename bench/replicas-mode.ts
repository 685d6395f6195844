import { enqueueEntityChange, pauseRegistration, resumeRegistration } from '@platform/db';
import type { BenchContext } from './context';
import type { BenchDatabase } from './database';
import { connect, createProperties, seedBenchAccount, signIn, type ApiClient } from './api-client';
import { closedLoop } from './api-mode';
import { eventually } from '@platform/testkit';
import { drainFigures, round, waitForDrain } from './drain';
import { rawHttpSplit } from './raw-http';
import { machineBusyMs, processCpuMs, type Target } from './processes';
import { benchEntity, seedBacklog, seedGroupedBacklog, seedParty, seedRegistration } from './seed';
import { startApi, startDispatcher, type RunningDispatcher } from './stack';

/** How the replicas of one drain are configured. */
export type ReplicaVariant =
  /** the bench's concurrency split between the processes (32 → 16 + 16, 8 × 4): the same total */
  | 'split'
  /** every process at the bench's concurrency: the total grows with the count */
  | 'per-process'
  /** as `split`, over G ordered groups, the target checking each group's order */
  | 'grouped'
  /** no backlog: changes written one per transaction at a steady rate, each waking every replica */
  | 'live';

export const REPLICA_VARIANTS: readonly ReplicaVariant[] = ['split', 'per-process', 'grouped', 'live'];

/** The live variant's writes per second and seconds of writing. */
const LIVE_RATE = 200;
const LIVE_SECONDS = 5;

/** Clock ticks per second of /proc's CPU times (USER_HZ: 100 on every Linux this runs on). */
const TICK_MS = 10;

/** Busy ticks of the whole machine, all cores, and user plus system ticks of one process. */
const machineTicks = async () => ({ busy: (await machineBusyMs()) / TICK_MS });
const processTicks = async (pid: number) => (await processCpuMs(pid)) / TICK_MS;

/** Transactions of `db`'s database so far, as the statistics collector has them. */
async function commits(db: BenchDatabase): Promise<number> {
  const { rows } = await db.knex.raw<{ rows: { n: number }[] }>(
    `select xact_commit + xact_rollback as n from pg_stat_database where datname = current_database()`,
  );
  return Number(rows[0]?.n ?? NaN);
}

/** CPU and deliveries at one moment of a drain. */
interface Sample {
  at: number;
  received: number;
  machine: number;
  dispatchers: number;
  /** Per process of the database server serving the dispatchers, and the target: its ticks. */
  others: Map<number, number>;
}

const sum = (values: number[]) => values.reduce((total, value) => total + value, 0);

async function sample(target: Target, pids: number[], others: number[]): Promise<Sample> {
  const [stats, machine, dispatchers, otherTicks] = await Promise.all([
    target.stats(),
    machineTicks(),
    Promise.all(pids.map(processTicks)),
    // a backend that has ended since counts as missing
    Promise.all(others.map((pid) => processTicks(pid).catch(() => NaN))),
  ]);
  return {
    at: performance.now(),
    received: stats.received,
    machine: machine.busy,
    dispatchers: sum(dispatchers),
    others: new Map(others.map((pid, i) => [pid, otherTicks[i]!])),
  };
}

/** Ticks of the processes both samples have (backends that lived through the window). */
function othersTicks(from: Sample, to: Sample): number {
  return sum(
    [...from.others].map(([pid, ticks]) => (to.others.get(pid) ?? NaN) - ticks).filter(Number.isFinite),
  );
}

/**
 * Samples when the target has received `from` of `total` deliveries and again at `to`: the
 * steady part of a drain, without each process's start (its code not yet optimised by V8, its
 * pools and connections opening) or the tail. Polls the target every 20 ms.
 */
async function steadyWindow(
  db: BenchDatabase,
  target: Target,
  pids: number[],
  total: number,
  timeoutMs: number,
): Promise<[Sample, Sample]> {
  let others: number[] = [];
  const at = async (share: number) => {
    let last: Sample | undefined;
    await eventually(async () => (last = await sample(target, pids, others)).received >= share * total, {
      timeoutMs,
      what: `the target did not receive ${share * 100} % of ${total} deliveries`,
    });
    return last!;
  };
  await at(STEADY_FROM / 2);
  // the dispatchers' backends, their pools grown by now (the server runs on this machine)
  const { rows } = await db.knex.raw<{ rows: { pid: number }[] }>(
    `select pid from pg_stat_activity where datname = current_database() and application_name like 'platform-dispatcher%'`,
  );
  others = [...rows.map((row) => row.pid), target.child.process.pid!];
  const start = await at(STEADY_FROM);
  return [start, await at(STEADY_TO)];
}

/** The steady window: from this share of the deliveries received to that one. */
const STEADY_FROM = 0.2;
const STEADY_TO = 0.9;

/**
 * Counts calls of the queue's functions in `db` from now on (`track_functions`, for the sessions
 * opened after it): a claim calls `webhooks_claim` (or `webhooks_claim_notified`) once, a result
 * flush `webhooks_complete` once.
 * Needs a superuser; false without one.
 */
async function trackCalls(db: BenchDatabase): Promise<boolean> {
  try {
    await db.knex.raw(`alter database ?? set track_functions = 'pl'`, [db.name]);
    return true;
  } catch {
    return false;
  }
}

/** Calls of the two claims (`webhooks_claim`, `webhooks_claim_notified`) and `webhooks_complete` (flushes) so far in `db`. */
async function queueCalls(db: BenchDatabase): Promise<{ claims: number; flushes: number }> {
  const { rows } = await db.knex.raw<{ rows: { funcname: string; calls: number }[] }>(
    `select funcname, calls from pg_stat_user_functions where funcname in ('webhooks_claim', 'webhooks_claim_notified', 'webhooks_complete')`,
  );
  const calls = (name: string) => Number(rows.find((row) => row.funcname === name)?.calls ?? 0);
  return {
    claims: calls('webhooks_claim') + calls('webhooks_claim_notified'),
    flushes: calls('webhooks_complete'),
  };
}

/** One drain by `processes` dispatchers, and what it cost. */
interface ReplicaRun {
  processes: number;
  perSecond: number;
  seconds: number;
  /** Busy CPU of the whole machine (all processes, all cores) per delivery, over the drain. */
  machineCpuMsPerDelivery: number;
  /** The dispatchers' own CPU (user + system, all of them) per delivery. */
  dispatcherCpuMsPerDelivery: number;
  /** The same three over the steady window (20 % to 90 % received), by the target's count and clock. */
  steadyPerSecond: number;
  steadyMachineCpuMsPerDelivery: number;
  steadyDispatcherCpuMsPerDelivery: number;
  /** Over the steady window: the dispatchers, their database backends and the target, per delivery. */
  steadyStackCpuMsPerDelivery: number;
  /** Transactions the database committed per delivery (claims, result flushes, the bench's polls). */
  transactionsPerDelivery: number;
  /** Deliveries per claim and per result flush (null without `track_functions`). */
  deliveriesPerClaim: number | null;
  deliveriesPerFlush: number | null;
  /** Deliveries the target received beyond one per webhook. */
  duplicates: number;
  /** Attempt rows beyond one per webhook. */
  extraAttempts: number;
  /** Grouped only: deliveries that arrived before an earlier change of their group. */
  orderViolations: number | null;
}

/**
 * One drain: `count` webhooks seeded by SQL behind a paused registration (so no replica starts
 * before the others), `processes` dispatchers started and healthy, then the registration resumed
 * (one NOTIFY wakes them all) and drained. CPU is read from /proc at the resume and when the
 * last webhook is Successful.
 */
async function drainWith(
  context: BenchContext,
  options: { variant: ReplicaVariant; processes: number; count: number; groups: number; label: string },
): Promise<ReplicaRun> {
  const { cluster, target } = context;
  const { variant, processes, count, groups } = options;
  const grouped = variant === 'grouped';
  const db = await cluster.create(options.label);
  try {
    const partyId = await seedParty(db.knex);
    const registration = await seedRegistration(db.knex, {
      partyId,
      targetUrl: target.url,
      shouldGroup: grouped,
      secrets: context.secrets,
      signingSecret: context.signingSecret,
    });
    await db.knex.transaction((trx) => pauseRegistration(trx, registration.registrationId, new Date()));
    if (grouped) await seedGroupedBacklog(db.knex, registration, groups, Math.ceil(count / groups));
    else await seedBacklog(db.knex, registration, count);
    const total = Number((await db.knex('webhooks').count<{ n: string }[]>('* as n'))[0]!.n);
    await db.knex.raw('analyze');
    const tracked = await trackCalls(db);
    await target.reset(grouped);

    const concurrency =
      variant === 'per-process'
        ? context.concurrency
        : Math.max(1, Math.floor(context.concurrency / processes));
    const stack = { ...context.stack(db.url), concurrency };
    const dispatchers: RunningDispatcher[] = await Promise.all(
      Array.from({ length: processes }, () => startDispatcher(stack)),
    );
    const pids = dispatchers.map((d) => d.child.process.pid!);
    try {
      const commitsBefore = await commits(db);
      const callsBefore = await queueCalls(db);
      const machineBefore = await machineTicks();
      const dispatchersBefore = await Promise.all(pids.map(processTicks));
      await db.knex.transaction((trx) => resumeRegistration(trx, registration.registrationId, new Date()));
      const [from, to] = await steadyWindow(db, target, pids, total, context.timeoutMs);
      await waitForDrain(db.knex, target, total, context.timeoutMs);
      const machineAfter = await machineTicks();
      const dispatchersAfter = await Promise.all(pids.map(processTicks));
      const drain = await drainFigures(db.knex);
      const stats = await target.stats();
      await Promise.all(dispatchers.map((d) => d.stop()));
      // a backend's statistics reach pg_stat_database when it ends
      const commitsAfter = await commits(db);
      const callsAfter = await queueCalls(db);
      const per = (calls: number) => (tracked && calls > 0 ? round(drain.deliveries / calls, 1) : null);
      const dispatcherTicks = dispatchersAfter.reduce((sum, t, i) => sum + t - dispatchersBefore[i]!, 0);
      const perDelivery = (ticks: number) => round((ticks * TICK_MS) / drain.deliveries, 3);
      return {
        processes,
        perSecond: round(drain.perSecond),
        seconds: round(drain.seconds, 3),
        machineCpuMsPerDelivery: perDelivery(machineAfter.busy - machineBefore.busy),
        dispatcherCpuMsPerDelivery: perDelivery(dispatcherTicks),
        steadyPerSecond: round(((to.received - from.received) * 1000) / (to.at - from.at)),
        steadyMachineCpuMsPerDelivery: round(
          ((to.machine - from.machine) * TICK_MS) / (to.received - from.received),
          3,
        ),
        steadyDispatcherCpuMsPerDelivery: round(
          ((to.dispatchers - from.dispatchers) * TICK_MS) / (to.received - from.received),
          3,
        ),
        steadyStackCpuMsPerDelivery: round(
          ((to.dispatchers - from.dispatchers + othersTicks(from, to)) * TICK_MS) /
            (to.received - from.received),
          3,
        ),
        transactionsPerDelivery: round((commitsAfter - commitsBefore) / drain.deliveries, 2),
        deliveriesPerClaim: per(callsAfter.claims - callsBefore.claims),
        deliveriesPerFlush: per(callsAfter.flushes - callsBefore.flushes),
        // the inspecting target counts a webhook id it saw before; the plain one only counts
        duplicates: grouped ? stats.duplicates : stats.received - drain.deliveries,
        extraAttempts: drain.attempts - drain.deliveries,
        orderViolations: grouped ? stats.orderViolations : null,
      };
    } finally {
      await Promise.all(dispatchers.map((d) => d.child.stop()));
    }
  } finally {
    await db.drop();
  }
}

/**
 * The live variant: `processes` dispatchers (the bench's concurrency split between them) idle on
 * an empty queue, then LIVE_RATE changes a second for LIVE_SECONDS, each in a transaction of its
 * own through the real enqueue statement (whose NOTIFY wakes every replica), as the API writes.
 * What it shows is the cost of those wake-ups: claims per delivery, and CPU per delivery of the
 * dispatchers and of the stack (the dispatchers, every backend they opened, the target).
 */
async function liveWith(
  context: BenchContext,
  options: { processes: number; label: string },
): Promise<ReplicaRun> {
  const { cluster, target } = context;
  const { processes } = options;
  const db = await cluster.create(options.label);
  try {
    const partyId = await seedParty(db.knex);
    await seedRegistration(db.knex, {
      partyId,
      targetUrl: target.url,
      shouldGroup: false,
      secrets: context.secrets,
      signingSecret: context.signingSecret,
    });
    const tracked = await trackCalls(db);
    await target.reset(false);
    const concurrency = Math.max(1, Math.floor(context.concurrency / processes));
    const dispatchers = await Promise.all(
      Array.from({ length: processes }, () => startDispatcher({ ...context.stack(db.url), concurrency })),
    );
    const pids = dispatchers.map((d) => d.child.process.pid!);
    const backends = async () =>
      (
        await db.knex.raw<{ rows: { pid: number }[] }>(
          `select pid from pg_stat_activity where datname = current_database() and application_name like 'platform-dispatcher%'`,
        )
      ).rows.map((row) => row.pid);
    try {
      const others = [...(await backends()), target.child.process.pid!];
      const from = await sample(target, pids, others);
      const callsBefore = await queueCalls(db);
      const writes = LIVE_RATE * LIVE_SECONDS;
      const started = performance.now();
      const pending: Promise<unknown>[] = [];
      for (let i = 1; i <= writes; i++) {
        const due = started + (i * 1000) / LIVE_RATE;
        const wait = due - performance.now();
        if (wait > 0) await new Promise((resolve) => setTimeout(resolve, wait));
        pending.push(
          db.knex.transaction((trx) =>
            enqueueEntityChange(trx, {
              entityName: 'Property',
              type: 2,
              entityId: i,
              entity: benchEntity(i, i, partyId, new Date().toISOString()),
              initiatorPartyId: partyId,
              initiatorAccountId: null,
            }),
          ),
        );
      }
      await Promise.all(pending);
      await waitForDrain(db.knex, target, writes, context.timeoutMs);
      // backends the dispatchers opened meanwhile count whole: their database was made for this run
      const later = (await backends()).filter((pid) => !from.others.has(pid));
      from.others = new Map([...from.others, ...later.map((pid) => [pid, 0] as const)]);
      const to = await sample(target, pids, [...from.others.keys()]);
      const drain = await drainFigures(db.knex);
      await Promise.all(dispatchers.map((d) => d.stop()));
      const calls = await queueCalls(db);
      const perDelivery = (ticks: number) => round((ticks * TICK_MS) / drain.deliveries, 3);
      const stats = await target.stats();
      const claims = calls.claims - callsBefore.claims;
      const flushes = calls.flushes - callsBefore.flushes;
      return {
        processes,
        perSecond: round(drain.perSecond),
        seconds: round(drain.seconds, 3),
        machineCpuMsPerDelivery: perDelivery(to.machine - from.machine),
        dispatcherCpuMsPerDelivery: perDelivery(to.dispatchers - from.dispatchers),
        steadyPerSecond: round(drain.perSecond),
        steadyMachineCpuMsPerDelivery: perDelivery(to.machine - from.machine),
        steadyDispatcherCpuMsPerDelivery: perDelivery(to.dispatchers - from.dispatchers),
        steadyStackCpuMsPerDelivery: perDelivery(to.dispatchers - from.dispatchers + othersTicks(from, to)),
        transactionsPerDelivery: NaN,
        deliveriesPerClaim: tracked && claims > 0 ? round(drain.deliveries / claims, 2) : null,
        deliveriesPerFlush: tracked && flushes > 0 ? round(drain.deliveries / flushes, 2) : null,
        duplicates: stats.received - drain.deliveries,
        extraAttempts: drain.attempts - drain.deliveries,
        orderViolations: null,
      };
    } finally {
      await Promise.all(dispatchers.map((d) => d.child.stop()));
    }
  } finally {
    await db.drop();
  }
}

const median = (values: number[]) => {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.floor(sorted.length / 2)]!;
};

/** The size of a delivery body of the throughput mode (a 1 KB entity): the split raw HTTP limit's bodies. */
const LIMIT_BODY_BYTES = 1204;
/** Raw requests per webhook of the drain: raw HTTP is about four times as fast, so its run is about as long. */
const LIMIT_REQUESTS_PER_DELIVERY = 3;

type Limit = Awaited<ReturnType<typeof rawHttpSplit>> & { round: number };

/**
 * Per process count: the split raw HTTP limit's medians over the rounds, and its machine CPU per
 * request against the first count's, the ratio the dispatchers' `machineCpuRatio` is held to.
 */
function summarizeLimit(limits: Limit[], counts: number[]) {
  const base = limits.filter((l) => l.processes === counts[0]);
  const baseCpu = median(base.map((l) => l.machineCpuMsPerRequest));
  return counts.map((processes) => {
    const mine = limits.filter((l) => l.processes === processes);
    const machineCpu = median(mine.map((l) => l.machineCpuMsPerRequest));
    return {
      processes,
      perSecond: median(mine.map((l) => l.perSecond)),
      machineCpuMsPerRequest: machineCpu,
      machineCpuRatio: round(machineCpu / baseCpu, 3),
      rounds: mine.map((l) => l.machineCpuMsPerRequest),
      // against the first count's of the same round
      ratioRounds: mine.map((l) =>
        round(l.machineCpuMsPerRequest / base.find((b) => b.round === l.round)!.machineCpuMsPerRequest, 3),
      ),
    };
  });
}

/** Per process count: the median of each figure over the rounds, and its ratio to the first count's. */
function summarize(runs: ReplicaRun[], counts: number[]) {
  const base = runs.filter((r) => r.processes === counts[0]);
  const baseRate = median(base.map((r) => r.perSecond));
  const baseCpu = median(base.map((r) => r.machineCpuMsPerDelivery));
  const baseSteady = median(base.map((r) => r.steadyPerSecond));
  return counts.map((processes) => {
    const mine = runs.filter((r) => r.processes === processes);
    const perSecond = median(mine.map((r) => r.perSecond));
    const machineCpu = median(mine.map((r) => r.machineCpuMsPerDelivery));
    return {
      processes,
      perSecond,
      ratio: round(perSecond / baseRate, 3),
      machineCpuMsPerDelivery: machineCpu,
      machineCpuRatio: round(machineCpu / baseCpu, 3),
      dispatcherCpuMsPerDelivery: median(mine.map((r) => r.dispatcherCpuMsPerDelivery)),
      steadyPerSecond: median(mine.map((r) => r.steadyPerSecond)),
      steadyRatio: round(median(mine.map((r) => r.steadyPerSecond)) / baseSteady, 3),
      steadyMachineCpuMsPerDelivery: median(mine.map((r) => r.steadyMachineCpuMsPerDelivery)),
      steadyDispatcherCpuMsPerDelivery: median(mine.map((r) => r.steadyDispatcherCpuMsPerDelivery)),
      steadyStackCpuMsPerDelivery: median(mine.map((r) => r.steadyStackCpuMsPerDelivery)),
      transactionsPerDelivery: median(mine.map((r) => r.transactionsPerDelivery)),
      deliveriesPerClaim:
        mine[0]!.deliveriesPerClaim === null ? null : median(mine.map((r) => r.deliveriesPerClaim!)),
      deliveriesPerFlush:
        mine[0]!.deliveriesPerFlush === null ? null : median(mine.map((r) => r.deliveriesPerFlush!)),
      // over every round, not a median: one duplicate anywhere is one too many
      duplicates: mine.reduce((sum, r) => sum + r.duplicates, 0),
      extraAttempts: mine.reduce((sum, r) => sum + r.extraAttempts, 0),
      orderViolations: mine.some((r) => r.orderViolations !== null)
        ? mine.reduce((sum, r) => sum + (r.orderViolations ?? 0), 0)
        : null,
      rates: mine.map((r) => r.perSecond),
    };
  });
}

/**
 * The replicas mode: the drain of `count` webhooks by each number of dispatcher processes in
 * `counts` (the production bundle, on one database), in interleaved rounds (1, 2, 4, 1, 2, 4, …),
 * for each variant; medians of the rounds. Then the API with one process against two (two ports,
 * the clients split between them), interleaved the same way, for GET and PATCH.
 */
export async function replicasMode(
  context: BenchContext,
  options: {
    counts: number[];
    count: number;
    groups: number;
    rounds: number;
    variants: readonly ReplicaVariant[];
    api: boolean;
    apiSeconds: number;
    clients: number;
  },
) {
  const { log } = context;
  const result: Record<string, unknown> = {
    mode: 'replicas',
    counts: options.counts,
    deliveries: options.count,
    rounds: options.rounds,
    concurrency: context.concurrency,
  };
  for (const variant of options.variants) {
    const runs: ReplicaRun[] = [];
    const limits: Limit[] = [];
    for (let round = 1; round <= options.rounds; round++) {
      for (const processes of options.counts) {
        if (variant === 'split') {
          // the limit of the same round: raw HTTP alone, split over as many processes
          log(
            `replicas: raw HTTP limit, round ${round}, ${processes} process(es), ${LIMIT_REQUESTS_PER_DELIVERY * options.count} POSTs`,
          );
          const limit = await rawHttpSplit(context.target.url, {
            processes,
            concurrency: context.concurrency,
            count: LIMIT_REQUESTS_PER_DELIVERY * options.count,
            bodyBytes: LIMIT_BODY_BYTES,
          });
          log(
            `replicas: raw HTTP ${limit.perSecond}/s, machine ${limit.machineCpuMsPerRequest} ms per request`,
          );
          limits.push({ ...limit, round });
        }
        log(
          `replicas: ${variant}, round ${round}, ${processes} dispatcher process(es), ${options.count} webhooks`,
        );
        const label = `replicas_${variant.replace('-', '_')}_${round}_${processes}`;
        const run =
          variant === 'live'
            ? await liveWith(context, { processes, label })
            : await drainWith(context, {
                variant,
                processes,
                count: options.count,
                groups: options.groups,
                label,
              });
        log(
          `replicas: ${run.perSecond}/s, machine ${run.machineCpuMsPerDelivery} ms, dispatchers ${run.dispatcherCpuMsPerDelivery} ms per delivery; ` +
            `${run.deliveriesPerClaim} per claim, ${run.deliveriesPerFlush} per flush; steady ${run.steadyPerSecond}/s, machine ${run.steadyMachineCpuMsPerDelivery} ms, stack ${run.steadyStackCpuMsPerDelivery} ms, dispatchers ${run.steadyDispatcherCpuMsPerDelivery} ms`,
        );
        runs.push(run);
      }
    }
    result[variant] = summarize(runs, options.counts);
    if (limits.length > 0) result.httpLimit = summarizeLimit(limits, options.counts);
  }
  if (options.api) result.api = await apiReplicas(context, options);
  result.database = context.cluster.server;
  return result;
}

/**
 * One API process against two on the same database, the same `clients` closed loops in total
 * (split evenly between the two ports), GET /api/properties and PATCH /api/properties/{id} with
 * 10 subscribed registrations and a dispatcher delivering, interleaved rounds, medians.
 */
async function apiReplicas(
  context: BenchContext,
  options: { rounds: number; apiSeconds: number; clients: number },
) {
  const { cluster, target, log } = context;
  const db = await cluster.create('replicas_api');
  const account = await seedBenchAccount(db.knex);
  await target.reset(false);
  const stack = context.stack(db.url);
  // one after the other: the first generates the signing key (DATA_DIR) the second reads
  const first = await startApi(stack);
  const second = await startApi(stack);
  const dispatcher = await startDispatcher(stack);
  const one = await signIn(first.url, account, options.clients);
  const half = Math.ceil(options.clients / 2);
  const pair = [connect(first.url, half, one.token), connect(second.url, half, one.token)];
  // every other request to the other port: with closed loops, half the clients on each process
  let turn = 0;
  const both: ApiClient = {
    token: one.token,
    send: (...args) => pair[turn++ % 2]!.send(...args),
    call: (...args) => pair[turn++ % 2]!.call(...args),
    close: async () => {},
  };
  try {
    for (let i = 0; i < 10; i++) {
      await one.call('POST', '/api/webhook-registrations', {
        targetUrl: target.url,
        enabledEvents: [{ entityName: 'Property', type: 2 }],
        targetAuthorization: { type: 0 },
      });
    }
    const properties = await createProperties(one.call, 200);
    let seq = 0;
    const routes = {
      get: () => ['GET', '/api/properties?PageSize=20'] as Parameters<ApiClient['send']>,
      patch: () =>
        [
          'PATCH',
          `/api/properties/${properties[Math.floor(Math.random() * properties.length)]}`,
          { notes: `replicas bench ${++seq}` },
        ] as Parameters<ApiClient['send']>,
    };
    const figures: Record<string, unknown> = {};
    for (const [route, next] of Object.entries(routes)) {
      const rates: Record<1 | 2, number[]> = { 1: [], 2: [] };
      const p50: Record<1 | 2, number[]> = { 1: [], 2: [] };
      let errors = 0;
      for (let round = 1; round <= options.rounds; round++) {
        for (const processes of [1, 2] as const) {
          log(`replicas: API ${route}, round ${round}, ${processes} process(es), ${options.clients} clients`);
          // the CPU figures it also answers are the first process's alone: not used here
          const phase = await closedLoop(
            first.child.process.pid!,
            processes === 1 ? one : both,
            options.clients,
            options.apiSeconds,
            next,
          );
          rates[processes].push(phase.perSecond);
          p50[processes].push(phase.p50Ms);
          errors += phase.errors;
        }
      }
      figures[route] = {
        onePerSecond: median(rates[1]),
        twoPerSecond: median(rates[2]),
        ratio: round(median(rates[2]) / median(rates[1]), 3),
        oneP50Ms: median(p50[1]),
        twoP50Ms: median(p50[2]),
        rates,
        errors,
      };
    }
    return { clients: options.clients, seconds: options.apiSeconds, ...figures };
  } finally {
    await one.close();
    await Promise.all(pair.map((c) => c.close()));
    await Promise.all([first.child.stop(), second.child.stop(), dispatcher.stop()]);
    await db.drop();
  }
}
