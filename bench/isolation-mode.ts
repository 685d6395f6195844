import {
  attemptKindsOf,
  ISOLATION,
  ISOLATION_FLOOR_MS,
  isolationRatio,
  measureIsolationPhase,
  seedDeadBacklog,
  seedIsolationCast,
  startDeadTarget,
  type IsolationPhase,
  type LatencySummary,
  type Receipt,
} from '@platform/testkit';
import type { BenchContext } from './context';
import { round } from './drain';
import { startTarget } from './processes';
import { startDispatcher } from './stack';
import type { DeliveryRecord } from './target';

/** Runs of each kind, interleaved: without, with, without, with, … */
const RUNS = 3;
/** The healthy tenants' origins: ports of the target process. */
const { healthyTargets } = ISOLATION;

type Kind = 'without' | 'with';

const rounded = (summary: LatencySummary) => ({
  p50Ms: round(summary.p50Ms, 1),
  p99Ms: round(summary.p99Ms, 1),
  maxMs: round(summary.maxMs, 1),
  deliveries: summary.count,
  undelivered: summary.undelivered,
});

const median = (values: number[]) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)]!;

/**
 * The isolation mode (docs/performance.md#the-modes): ten healthy tenants at ten origins and a tenant with a dead
 * endpoint and a healthy second one (the scenario of packages/testkit/src/isolation.ts, which the
 * dispatcher's isolation test runs too). Each run gets a fresh database and dispatcher (the
 * production bundle, WEBHOOK_TIMEOUT 2 s, the breaker at its defaults), warms up for a second,
 * then writes at `rate` for `seconds`, every other write the dead tenant's; a "with" run first
 * queues 1,000 webhooks for an endpoint that accepts connections and never answers, and starts
 * writing once the dispatcher has sent it the first. Runs alternate without / with, three each;
 * the figures are the medians of each kind, and the ratio of the p99s (raw, and against a
 * baseline of at least ISOLATION_FLOOR_MS, the test's criterion: at most 2).
 */
export async function isolationMode(context: BenchContext, options: { rate: number; seconds: number }) {
  const { cluster, log } = context;
  // the healthy origins and the sibling's, in a process of their own like the other modes' target
  const target = await startTarget(healthyTargets + 1);
  // idle, so in the bench's process
  const dead = await startDeadTarget();
  const sealing = { secrets: context.secrets, signingSecret: context.signingSecret };
  const receipts = async (): Promise<Receipt[]> =>
    (await target.records<DeliveryRecord[]>()).map(([webhookId, receivedAt]) => ({ webhookId, receivedAt }));

  const run = async (kind: Kind, index: number) => {
    const db = await cluster.create(`isolation_${index}_${kind}`);
    const cast = await seedIsolationCast(db.knex, {
      healthyUrls: target.urls.slice(0, healthyTargets),
      siblingUrl: target.urls[healthyTargets]!,
      ...sealing,
    });
    await target.reset(true);
    const dispatcher = await startDispatcher(context.stack(db.url), {
      WEBHOOK_TIMEOUT: ISOLATION.webhookTimeout,
    });
    try {
      const phase = (seconds: number) =>
        measureIsolationPhase(db.knex, cast, {
          perSecond: options.rate,
          seconds,
          receipts,
          watch: dispatcher.child,
        });
      await phase(ISOLATION.warmupSeconds);
      const deadRegistrationId =
        kind === 'with'
          ? await seedDeadBacklog(db.knex, cast, { dead, watch: dispatcher.child, ...sealing })
          : undefined;
      const measured = await phase(options.seconds);
      const deadAttempts =
        deadRegistrationId === undefined ? undefined : await attemptKindsOf(db.knex, deadRegistrationId);
      return { kind, ...measured, deadAttempts };
    } finally {
      await dispatcher.stop();
    }
  };

  const runs: (IsolationPhase & { kind: Kind; deadAttempts?: Record<string, number> })[] = [];
  try {
    for (let index = 1; index <= RUNS; index++) {
      for (const kind of ['without', 'with'] as const) {
        log(`isolation: run ${index} of ${RUNS}, ${kind} the dead endpoint`);
        const result = await run(kind, index);
        log(
          `isolation:   healthy p50 ${result.healthy.p50Ms.toFixed(1)} p99 ${result.healthy.p99Ms.toFixed(1)} ms, ` +
            `sibling p50 ${result.sibling.p50Ms.toFixed(1)} p99 ${result.sibling.p99Ms.toFixed(1)} ms` +
            (result.deadAttempts ? `, dead endpoint attempts ${JSON.stringify(result.deadAttempts)}` : ''),
        );
        runs.push(result);
      }
    }
  } finally {
    await dead.close();
    await target.child.stop();
  }

  const medians = (kind: Kind, endpoint: 'healthy' | 'sibling') => {
    const of = runs.filter((r) => r.kind === kind).map((r) => r[endpoint]);
    return {
      p50Ms: round(median(of.map((s) => s.p50Ms)), 1),
      p99Ms: round(median(of.map((s) => s.p99Ms)), 1),
    };
  };
  const figures = (endpoint: 'healthy' | 'sibling') => {
    const without = medians('without', endpoint);
    const withDead = medians('with', endpoint);
    return {
      without,
      with: withDead,
      p50Ratio: round(withDead.p50Ms / without.p50Ms, 2),
      p99Ratio: round(withDead.p99Ms / without.p99Ms, 2),
      // the test's criterion (at most 2): the baseline p99 taken as no lower than the floor
      p99RatioFloored: round(isolationRatio(without.p99Ms, withDead.p99Ms), 2),
    };
  };
  return {
    mode: 'isolation',
    healthyTargets,
    deadBacklog: ISOLATION.deadBacklog,
    webhookTimeout: ISOLATION.webhookTimeout,
    writesPerSecond: options.rate,
    seconds: options.seconds,
    floorMs: ISOLATION_FLOOR_MS,
    // the ten healthy tenants' endpoints, then the dead tenant's own healthy second endpoint
    healthy: figures('healthy'),
    sameParty: figures('sibling'),
    runs: runs.map((r) => ({
      kind: r.kind,
      healthy: rounded(r.healthy),
      sameParty: rounded(r.sibling),
      ...(r.deadAttempts ? { deadAttempts: r.deadAttempts } : {}),
    })),
    concurrency: context.concurrency,
    database: cluster.server,
  };
}
