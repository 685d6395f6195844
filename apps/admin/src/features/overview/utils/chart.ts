/**
 * One minute of the attempts chart: the requests sent and of them the failed ones. Attempts that
 * sent no request (skipped: circuit-open, …) are not bars (a few real requests would vanish beside
 * thousands of skips); the summary counts them apart.
 */
export interface ChartPoint {
  minute: string;
  requests: number;
  failures: number;
  skipped: number;
}

export interface ChartBar {
  minute: string;
  x: number;
  width: number;
  /** The successful part (bottom of the stack). */
  success: { y: number; height: number };
  /** The failed part (on top). */
  failure: { y: number; height: number };
}

export interface ChartLayout {
  bars: ChartBar[];
  /** The top of the value axis: a round number at or above the busiest minute. */
  max: number;
  ticks: number[];
}

/** A round axis maximum at or above `value`: 1, 2, 5, 10, 20, 50, … */
export function niceMax(value: number): number {
  if (value <= 0) return 1;
  const magnitude = 10 ** Math.floor(Math.log10(value));
  for (const step of [1, 2, 5, 10]) if (value <= step * magnitude) return step * magnitude;
  return 10 * magnitude;
}

/**
 * Stacked bars (successes below, failures on top) of requests per minute, in an area of
 * `width` × `height` user units whose bottom edge is the zero line.
 */
export function layoutAttemptBars(points: readonly ChartPoint[], width: number, height: number): ChartLayout {
  const busiest = Math.max(0, ...points.map((p) => p.requests));
  const max = niceMax(busiest);
  const slot = points.length ? width / points.length : width;
  const gap = Math.min(2, slot * 0.2);
  const scale = (value: number) => (value / max) * height;
  const bars = points.map((point, index) => {
    const failures = Math.min(point.failures, point.requests);
    const successHeight = scale(point.requests - failures);
    const failureHeight = scale(failures);
    return {
      minute: point.minute,
      x: index * slot + gap / 2,
      width: Math.max(slot - gap, 0.5),
      success: { y: height - successHeight, height: successHeight },
      failure: { y: height - successHeight - failureHeight, height: failureHeight },
    };
  });
  return { bars, max, ticks: [0, max / 2, max] };
}
