import { describe, expect, it } from 'vitest';
import { summarize, type HarnessRow, type Round } from './peers-mode';

const quiet = { workerMsPerDelivery: 0.3, foreignShare: 0.01, stealShare: 0 };

/** A peer phase as the harness writes it (results/latest.json), every check passing. */
function peer(subject: string, mode: string, figures: Partial<HarnessRow> & { cpuMs?: number }): HarnessRow {
  const { cpuMs = 0.5, ...rest } = figures;
  return {
    subject,
    kind: 'peer',
    mode,
    n: 1000,
    duplicates: 0,
    queueRemaining: 0,
    errors: 0,
    timedOut: false,
    ...(mode === 'throughput' ? { uniqueAttempts: 1000 } : {}),
    ...(mode === 'ordered' ? { targetCount: 1000, orderingViolations: 0, missingSeqs: 0 } : {}),
    ...(mode === 'latency' ? { sent: 2600, received: 2600 } : {}),
    ...rest,
    cpu: { ...quiet, machineMsPerDelivery: cpuMs },
  };
}

function limit(subject: string, mode: string, rate: number): HarnessRow {
  return { subject, kind: 'limit', mode, rate, cpu: { ...quiet, machineMsPerDelivery: 0.2 } };
}

/** One round: our figures and the peers', each subject's three modes. */
function round(
  queuePerSecond: number,
  floorPerSecond: number,
  l1: number,
  figures: Record<string, [number, number, number, number, number]>,
): Round {
  const rows: HarnessRow[] = [
    limit('L1 raw HTTP', 'http', l1),
    limit('L2 raw DB insert', 'db', 5000),
    limit('L3 HTTP+insert, no queue', 'http+db', 3000),
  ];
  for (const [subject, [drain, cpuMs, ordered, p50, p99]] of Object.entries(figures)) {
    rows.push(
      peer(subject, 'throughput', { drainRate: drain, cpuMs }),
      peer(subject, 'latency', { latencyMs: { p50, p95: p99, p99 } }),
      peer(subject, 'ordered', { drainRate: ordered }),
    );
  }
  return { queuePerSecond, floorPerSecond, rows };
}

// Each ratio is only worth something if it divides the right figures of the same round.
describe('the peers summary', () => {
  // [throughput drain, machine CPU ms per delivery, ordered drain, latency p50, latency p99]
  const rounds = [
    round(10_000, 40_000, 10_000, {
      platform: [6000, 0.3, 5400, 2, 8],
      'graphile-worker': [4000, 0.6, 1800, 4, 16],
      'pg-boss': [3000, 0.9, 2700, 5, 20],
    }),
    round(20_000, 20_000, 5_000, {
      platform: [3000, 0.4, 3000, 3, 9],
      'graphile-worker': [6000, 0.4, 1500, 2, 6],
      'pg-boss': [2000, 1.0, 1000, 6, 30],
    }),
  ];

  it('divides our figures by the peers', () => {
    const { ratios } = summarize(rounds, 1000, { peers: 963, platform: 1080 });
    expect(ratios.drainVsGraphileWorker).toEqual({ median: 1, rounds: [1.5, 0.5] });
    expect(ratios.drainVsPgBoss).toEqual({ median: 1.75, rounds: [2, 1.5] });
    expect(ratios.machineCpuVsGraphileWorker).toEqual({ median: 0.75, rounds: [0.5, 1] });
    // the faster peer's ordered drain of the same round: pg-boss in the first, graphile-worker in the second
    expect(ratios.orderedVsBestPeerOrdered).toEqual({ median: 2, rounds: [2, 2] });
    expect(ratios.orderedVsOurUnordered).toEqual({ median: 0.95, rounds: [0.9, 1] });
    expect(ratios.latencyP50VsGraphileWorker).toEqual({ median: 1, rounds: [0.5, 1.5] });
    expect(ratios.latencyP99VsGraphileWorker).toEqual({ median: 1, rounds: [0.5, 1.5] });
  });

  it('divides our drain by the composite limit of the same round', () => {
    const summary = summarize(rounds, 1000, { peers: 963, platform: 1080 });
    // 1 / (1/L1 + 1/queue): 5,000 in the first round, 4,000 in the second
    expect(summary.compositeRounds).toEqual([5000, 4000]);
    expect(summary.ratios.drainOfCompositeLimit).toEqual({ median: 0.975, rounds: [1.2, 0.75] });
    // and by that limit with the queue statements at their floor: 8,000 and 4,000
    expect(summary.compositeAtFloorRounds).toEqual([8000, 4000]);
    expect(summary.ratios.drainOfCompositeAtFloor).toEqual({ median: 0.75, rounds: [0.75, 0.75] });
    expect(summary.ratios.graphileWorkerOfCompositeAtFloor).toEqual({ median: 1, rounds: [0.5, 1.5] });
    expect(summary.ratios.queueOfFloor).toEqual({ median: 0.625, rounds: [0.25, 1] });
    expect(summary.problems).toEqual([]);
  });

  it('reports per mode the figures, the noise and every duplicate or order violation', () => {
    const noisy = structuredClone(rounds);
    const ordered = noisy[1]!.rows.find((row) => row.subject === 'platform' && row.mode === 'ordered')!;
    ordered.orderingViolations = 3;
    const latency = noisy[0]!.rows.find((row) => row.subject === 'pg-boss' && row.mode === 'latency')!;
    latency.duplicates = 2;
    latency.received = 2602;
    latency.cpu.foreignShare = 0.4;
    const summary = summarize(noisy, 1000, { peers: 963, platform: 1080 });
    expect(summary.subjects.platform!.ordered).toMatchObject({
      perSecond: 4200,
      rounds: [5400, 3000],
      orderViolations: [0, 3],
      duplicates: [0, 0],
    });
    expect(summary.subjects['pg-boss']!.latency).toMatchObject({
      p50: 5.5,
      p50Rounds: [5, 6],
      p99Rounds: [20, 30],
      duplicates: [2, 0],
      foreignShare: [0.4, 0.01],
      stealShare: [0, 0],
    });
    expect(summary.problems).toEqual([
      'platform ordered round 2: 3 order violations',
      'pg-boss latency round 1: 2 duplicate deliveries',
    ]);
  });

  it('summarizes a run of some modes only (--peer-modes): their figures and ratios, no missing phases', () => {
    // a latency-only run: no queue statements alone, no limits, no throughput or ordered phases
    const latencyOnly = rounds.map(({ rows }) => ({
      queuePerSecond: NaN,
      floorPerSecond: NaN,
      rows: rows.filter((row) => row.mode === 'latency'),
    }));
    const summary = summarize(latencyOnly, 1000, { peers: 963, platform: 1080 }, ['latency']);
    expect(Object.keys(summary.ratios)).toEqual(['latencyP50VsGraphileWorker', 'latencyP99VsGraphileWorker']);
    expect(summary.ratios.latencyP50VsGraphileWorker).toEqual({ median: 1, rounds: [0.5, 1.5] });
    expect(Object.keys(summary.subjects.platform!)).toEqual(['latency']);
    expect(summary.limits).toEqual({});
    expect(summary.problems).toEqual([]);
    // ordered without throughput: its ratio to the best peer, not to our unordered drain
    const orderedOnly = rounds.map(({ rows }) => ({
      queuePerSecond: NaN,
      floorPerSecond: NaN,
      rows: rows.filter((row) => row.mode === 'ordered'),
    }));
    const ordered = summarize(orderedOnly, 1000, { peers: 963, platform: 1080 }, ['ordered']);
    expect(Object.keys(ordered.ratios)).toEqual(['orderedVsBestPeerOrdered']);
    expect(ordered.problems).toEqual([]);
  });
});
