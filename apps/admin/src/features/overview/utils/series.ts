import type { WebhookStatsSeriesRead } from '@platform/shared';
import { niceMax } from './chart';

export type SeriesPoint = WebhookStatsSeriesRead['points'][number];

/** The ranges the console offers (`?range=`), each within the per-minute figures' 48 hours. */
export const SERIES_RANGES = [
  { key: '1h', label: '1 hour', hours: 1 },
  { key: '6h', label: '6 hours', hours: 6 },
  { key: '24h', label: '24 hours', hours: 24 },
  { key: '48h', label: '48 hours', hours: 48 },
] as const;
export type SeriesRangeKey = (typeof SERIES_RANGES)[number]['key'];
export const DEFAULT_SERIES_RANGE: SeriesRangeKey = '24h';

/** The range a `?range=` value names; null for a value that names none (the page says so). */
export function seriesRange(value: string | null) {
  if (value === null) return SERIES_RANGES.find((range) => range.key === DEFAULT_SERIES_RANGE)!;
  return SERIES_RANGES.find((range) => range.key === value) ?? null;
}

/** The three stacked parts of a step's requests, bottom to top. */
export const SERIES_PARTS = ['successes', 'otherFailures', 'targetFailures'] as const;
export type SeriesPart = (typeof SERIES_PARTS)[number];

export interface SeriesBar {
  at: string;
  x: number;
  width: number;
  parts: { part: SeriesPart; y: number; height: number }[];
}

export interface SeriesLayout {
  bars: SeriesBar[];
  /** The top of the requests axis. */
  max: number;
  /** The top of the latency axis (ms). */
  latencyMax: number;
  /** SVG polyline points of p50 and p95 over the latency area; a step without requests breaks the line. */
  p50: string[];
  p95: string[];
}

/**
 * Stacked bars of requests per step (successes, refused, target failures) in `width` × `height`,
 * and the p50/p95 latency as line segments in `width` × `latencyHeight`, each point at its step's middle.
 */
export function layoutSeries(
  points: readonly SeriesPoint[],
  width: number,
  height: number,
  latencyHeight: number,
): SeriesLayout {
  const max = niceMax(Math.max(0, ...points.map((p) => p.requests)));
  const latencyMax = niceMax(Math.max(0, ...points.map((p) => p.p95Ms ?? 0)));
  const slot = points.length ? width / points.length : width;
  const gap = Math.min(2, slot * 0.2);
  const bars = points.map((point, index) => {
    let top = height;
    const parts = SERIES_PARTS.map((part) => {
      const partHeight = (point[part] / max) * height;
      top -= partHeight;
      return { part, y: top, height: partHeight };
    }).filter((part) => part.height > 0);
    return { at: point.at, x: index * slot + gap / 2, width: Math.max(slot - gap, 0.5), parts };
  });
  const line = (key: 'p50Ms' | 'p95Ms') => {
    const runs: string[] = [];
    let run: [number, number][] = [];
    // a step alone between gaps is a short level stroke across its bar, so it is seen
    const close = () => {
      if (run.length === 1)
        run = [
          [run[0]![0] - slot * 0.4, run[0]![1]],
          [run[0]![0] + slot * 0.4, run[0]![1]],
        ];
      if (run.length) runs.push(run.map(([x, y]) => `${round(x)},${round(y)}`).join(' '));
      run = [];
    };
    points.forEach((point, index) => {
      const value = point[key];
      if (value === null) return close();
      run.push([(index + 0.5) * slot, latencyHeight - (value / latencyMax) * latencyHeight]);
    });
    close();
    return runs;
  };
  return { bars, max, latencyMax, p50: line('p50Ms'), p95: line('p95Ms') };
}

const round = (value: number) => Math.round(value * 10) / 10;

/** The totals of a series, for its summary and its caption. */
export function seriesTotals(points: readonly SeriesPoint[]) {
  const total = (key: 'requests' | 'successes' | 'targetFailures' | 'otherFailures' | 'skipped') =>
    points.reduce((sum, point) => sum + point[key], 0);
  return {
    requests: total('requests'),
    successes: total('successes'),
    targetFailures: total('targetFailures'),
    otherFailures: total('otherFailures'),
    skipped: total('skipped'),
  };
}
