import {
  attemptKindsOf,
  DEAD_PATH,
  ISOLATION,
  ISOLATION_FLOOR_MS,
  ISOLATION_LAYOUTS,
  isolationBreaches,
  isolationRatio,
  measureIsolationPhase,
  seedDeadBacklog,
  seedIsolationCast,
  type IsolationLayout,
  type IsolationPhase,
  type LatencySummary,
  type Receipt,
} from '@platform/testkit';
import type { BenchContext } from './context';
import { round } from './drain';
import { startTarget } from './processes';
import { startDispatcher } from './stack';
import type { DeliveryRecord } from './target';

/** Runs of each kind and layout, interleaved: per round, each layout without, then with. */
const RUNS = 3;
const { healthyTargets } = ISOLATION;

type Kind = 'without' | 'with';
type Endpoint = keyof IsolationPhase;

const rounded = (summary: LatencySummary) => ({
  p50Ms: round(summary.p50Ms, 1),
  p99Ms: round(summary.p99Ms, 1),
  maxMs: round(summary.maxMs, 1),
  deliveries: summary.count,
  undelivered: summary.undelivered,
});

const median = (values: number[]) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)]!;

/**
 * The isolation mode (docs/performance.md#the-modes): ten healthy tenants and a tenant with a
 * dead endpoint and a healthy second one, in each of issue 27's three layouts (the scenario of
 * packages/testkit/src/isolation.ts, which the dispatcher's isolation test runs too): (a) every
 * healthy endpoint at an origin of its own, (b) the ten tenants' endpoints at other paths of the
 * dead endpoint's origin, (c) the dead tenant's second endpoint there. Each run gets a fresh
 * database and dispatcher (the production bundle, WEBHOOK_TIMEOUT 2 s, the breaker at its
 * defaults), warms up for a second, then writes at `rate` for `seconds`, every other write the
 * dead tenant's; a "with" run first queues 1,000 webhooks for the endpoint that accepts
 * connections and never answers, and starts writing once the dispatcher has sent it the first.
 * Per round each layout runs without, then with, three rounds; per layout and kind of endpoint
 * the figures are the medians of the p50s and p99s, the worst max and the deliveries never made,
 * the ratio of the p99s (raw, and against a baseline of at least ISOLATION_FLOOR_MS: the test's
 * criterion, at most 2), and `breaches`: what of the test's criterion those figures break.
 */
export async function isolationMode(context: BenchContext, options: { rate: number; seconds: number }) {
  const { cluster, log } = context;
  // one process, like the other modes' target: the healthy origins of their own, then the dead
  // endpoint's origin, whose DEAD_PATH never answers and whose other paths are the shared layouts'
  const target = await startTarget(healthyTargets + 2, DEAD_PATH);
  const hosts = {
    ownUrls: target.urls.slice(0, healthyTargets + 1),
    sharedOrigin: new URL(target.urls[healthyTargets + 1]!).origin,
  };
  const sealing = { secrets: context.secrets, signingSecret: context.signingSecret };
  const receipts = async (): Promise<Receipt[]> =>
    (await target.records<DeliveryRecord[]>()).map(([webhookId, receivedAt]) => ({ webhookId, receivedAt }));

  const run = async (layout: IsolationLayout, kind: Kind, index: number) => {
    const db = await cluster.create(`isolation_${index}_${layout.replace('-', '_')}_${kind}`);
    const cast = await seedIsolationCast(db.knex, { layout, hosts, ...sealing });
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
          ? await seedDeadBacklog(db.knex, cast, {
              deadRequests: async () => (await target.stats()).hung,
              watch: dispatcher.child,
              ...sealing,
            })
          : undefined;
      const measured = await phase(options.seconds);
      const deadAttempts =
        deadRegistrationId === undefined ? undefined : await attemptKindsOf(db.knex, deadRegistrationId);
      return { layout, kind, ...measured, deadAttempts };
    } finally {
      await dispatcher.stop();
    }
  };

  const runs: (IsolationPhase & {
    layout: IsolationLayout;
    kind: Kind;
    deadAttempts?: Record<string, number>;
  })[] = [];
  try {
    for (let index = 1; index <= RUNS; index++) {
      for (const layout of ISOLATION_LAYOUTS) {
        for (const kind of ['without', 'with'] as const) {
          log(`isolation: round ${index} of ${RUNS}, ${layout}, ${kind} the dead endpoint`);
          const result = await run(layout, kind, index);
          const line = (s: LatencySummary) =>
            `p50 ${s.p50Ms.toFixed(1)} p99 ${s.p99Ms.toFixed(1)} max ${s.maxMs.toFixed(1)} ms` +
            (s.undelivered ? `, ${s.undelivered} undelivered` : '');
          log(
            `isolation:   healthy ${line(result.healthy)}; sibling ${line(result.sibling)}` +
              (result.deadAttempts ? `; dead endpoint attempts ${JSON.stringify(result.deadAttempts)}` : ''),
          );
          runs.push(result);
        }
      }
    }
  } finally {
    await target.child.stop();
  }

  /** One kind's runs of a layout, as one summary: median p50 and p99, the worst max, every miss. */
  const combined = (layout: IsolationLayout, kind: Kind, endpoint: Endpoint): LatencySummary => {
    const of = runs.filter((r) => r.layout === layout && r.kind === kind).map((r) => r[endpoint]);
    return {
      count: of.reduce((sum, s) => sum + s.count, 0),
      undelivered: of.reduce((sum, s) => sum + s.undelivered, 0),
      p50Ms: median(of.map((s) => s.p50Ms)),
      p99Ms: median(of.map((s) => s.p99Ms)),
      maxMs: Math.max(...of.map((s) => s.maxMs)),
    };
  };
  const figures = (layout: IsolationLayout, endpoint: Endpoint) => {
    const without = combined(layout, 'without', endpoint);
    const withDead = combined(layout, 'with', endpoint);
    return {
      without: rounded(without),
      with: rounded(withDead),
      p50Ratio: round(withDead.p50Ms / without.p50Ms, 2),
      p99Ratio: round(withDead.p99Ms / without.p99Ms, 2),
      // the test's criterion (at most 2): the baseline p99 taken as no lower than the floor
      p99RatioFloored: round(isolationRatio(without.p99Ms, withDead.p99Ms), 2),
      breaches: isolationBreaches(without, withDead),
    };
  };
  const layouts = Object.fromEntries(
    ISOLATION_LAYOUTS.map((layout) => [
      layout,
      // the ten healthy tenants' endpoints, then the dead tenant's own healthy second endpoint
      { healthy: figures(layout, 'healthy'), sameParty: figures(layout, 'sibling') },
    ]),
  ) as Record<
    IsolationLayout,
    { healthy: ReturnType<typeof figures>; sameParty: ReturnType<typeof figures> }
  >;
  return {
    mode: 'isolation',
    healthyTargets,
    deadBacklog: ISOLATION.deadBacklog,
    webhookTimeout: ISOLATION.webhookTimeout,
    writesPerSecond: options.rate,
    seconds: options.seconds,
    floorMs: ISOLATION_FLOOR_MS,
    latestMs: ISOLATION.latestMs,
    layouts,
    runs: runs.map((r) => ({
      layout: r.layout,
      kind: r.kind,
      healthy: rounded(r.healthy),
      sameParty: rounded(r.sibling),
      ...(r.deadAttempts ? { deadAttempts: r.deadAttempts } : {}),
    })),
    concurrency: context.concurrency,
    database: cluster.server,
  };
}
