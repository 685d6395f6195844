import { describe, expect, it } from 'vitest';
import { layoutAttemptBars, niceMax } from './chart';

describe('attempts chart', () => {
  it('rounds the axis up to 1, 2 or 5 times a power of ten', () => {
    expect([0, 1, 3, 7, 10, 11, 84, 250, 999].map(niceMax)).toEqual([1, 1, 5, 10, 10, 20, 100, 500, 1000]);
  });

  it('stacks failed requests on successful ones, scaled to the axis; skips draw no bar', () => {
    const points = [
      { minute: 'a', requests: 0, failures: 0, skipped: 0 },
      { minute: 'b', requests: 10, failures: 4, skipped: 500 },
    ];
    const { bars, max, ticks } = layoutAttemptBars(points, 200, 100);
    expect(max).toBe(10);
    expect(ticks).toEqual([0, 5, 10]);
    expect(bars[0]!.success.height).toBe(0);
    expect(bars[1]!.success).toEqual({ y: 40, height: 60 });
    expect(bars[1]!.failure).toEqual({ y: 0, height: 40 });
    expect(bars[1]!.x).toBeGreaterThanOrEqual(100);
    expect(bars[1]!.x + bars[1]!.width).toBeLessThanOrEqual(200);
  });

  it('never draws more failures than requests', () => {
    const { bars } = layoutAttemptBars([{ minute: 'a', requests: 2, failures: 5, skipped: 0 }], 10, 10);
    expect(bars[0]!.failure.height + bars[0]!.success.height).toBe(10);
  });
});
