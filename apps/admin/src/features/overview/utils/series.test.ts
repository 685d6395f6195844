import { describe, expect, it } from 'vitest';
import { layoutSeries, seriesRange, seriesTotals, type SeriesPoint } from './series';

const point = (at: string, values: Partial<SeriesPoint> = {}): SeriesPoint => ({
  at,
  requests: 0,
  successes: 0,
  targetFailures: 0,
  otherFailures: 0,
  skipped: 0,
  p50Ms: null,
  p95Ms: null,
  ...values,
});

describe('layoutSeries', () => {
  it('stacks successes, refusals and target failures to the step’s requests', () => {
    const { bars, max } = layoutSeries(
      [
        point('2026-11-27T10:00:00Z', { requests: 10, successes: 6, otherFailures: 1, targetFailures: 3 }),
        point('2026-11-27T10:15:00Z'),
      ],
      200,
      100,
      50,
    );
    expect(max).toBe(10);
    expect(bars[0]!.parts.map((part) => [part.part, part.height])).toEqual([
      ['successes', 60],
      ['otherFailures', 10],
      ['targetFailures', 30],
    ]);
    // the top of the stack is the top of the area: 10 requests of an axis of 10
    expect(bars[0]!.parts.at(-1)!.y).toBe(0);
    expect(bars[1]!.parts).toEqual([]);
    expect(bars[1]!.x).toBeGreaterThan(bars[0]!.x);
  });

  it('draws latency as lines broken where a step had no requests, a lone step as a short stroke', () => {
    const { p50, p95, latencyMax } = layoutSeries(
      [
        point('a', { requests: 1, successes: 1, p50Ms: 10, p95Ms: 20 }),
        point('b', { requests: 1, successes: 1, p50Ms: 5, p95Ms: 10 }),
        point('c'),
        point('d', { requests: 1, successes: 1, p50Ms: 20, p95Ms: 20 }),
      ],
      400,
      100,
      100,
    );
    expect(latencyMax).toBe(20);
    expect(p95).toEqual(['50,0 150,50', '310,0 390,0']);
    expect(p50).toEqual(['50,50 150,75', '310,0 390,0']);
  });
});

describe('seriesRange and seriesTotals', () => {
  it('reads the range from the URL, 24 hours by default, null for a value that names none', () => {
    expect(seriesRange(null)?.hours).toBe(24);
    expect(seriesRange('1h')?.hours).toBe(1);
    expect(seriesRange('7d')).toBeNull();
  });

  it('sums every part', () => {
    expect(
      seriesTotals([
        point('a', { requests: 3, successes: 2, targetFailures: 1, skipped: 4 }),
        point('b', { requests: 1, otherFailures: 1 }),
      ]),
    ).toEqual({ requests: 4, successes: 2, targetFailures: 1, otherFailures: 1, skipped: 4 });
  });
});
