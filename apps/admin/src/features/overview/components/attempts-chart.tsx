import { formatClock, formatCount } from '../../../lib/format';
import { ChartFrame } from './chart-frame';
import { layoutAttemptBars, type ChartPoint } from '../utils/chart';

const WIDTH = 600;
const HEIGHT = 160;

/** A text summary of the chart, for its accessible name and for readers who skip the picture. */
export function chartSummary(points: readonly ChartPoint[]): string {
  const requests = points.reduce((sum, p) => sum + p.requests, 0);
  const failures = points.reduce((sum, p) => sum + p.failures, 0);
  const skipped = points.reduce((sum, p) => sum + p.skipped, 0);
  const skips = skipped === 0 ? '' : ` ${formatCount(skipped)} attempts skipped (no request sent).`;
  if (requests === 0) return `No requests sent in the last ${points.length} minutes.${skips}`;
  const busiest = points.reduce((best, p) => (p.requests > best.requests ? p : best), points[0]!);
  return (
    `${formatCount(requests)} requests in the last ${points.length} minutes, ${formatCount(failures)} failed; ` +
    `busiest minute ${formatClock(busiest.minute)} with ${formatCount(busiest.requests)}.${skips}`
  );
}

/**
 * Requests sent per minute, successes and failures stacked (skips only in the summary), in the
 * console's chart frame.
 */
export function AttemptsChart({ points }: { points: readonly ChartPoint[] }) {
  const { bars, max, ticks } = layoutAttemptBars(points, WIDTH, HEIGHT);
  const summary = chartSummary(points);
  return (
    <ChartFrame
      testId="attempts-chart"
      width={WIDTH}
      height={HEIGHT}
      yLabels={[...ticks].reverse().map(formatCount)}
      label={summary}
      xAxis={{ points, labelOf: (point) => formatClock(point.minute) }}
      caption={
        <>
          <span className="legend legend--success">Delivered</span>
          <span className="legend legend--failure">Failed</span>
          <span className="muted">{summary}</span>
        </>
      }
    >
      {ticks.map((tick) => {
        const y = HEIGHT - (tick / max) * HEIGHT;
        return (
          <line
            key={tick}
            className="chart__grid"
            x1={0}
            x2={WIDTH}
            y1={y}
            y2={y}
            vectorEffect="non-scaling-stroke"
          />
        );
      })}
      {bars.map((bar) => (
        <g key={bar.minute}>
          {bar.success.height > 0 && (
            <rect
              className="chart__bar chart__bar--success"
              x={bar.x}
              y={bar.success.y}
              width={bar.width}
              height={bar.success.height}
            />
          )}
          {bar.failure.height > 0 && (
            <rect
              className="chart__bar chart__bar--failure"
              x={bar.x}
              y={bar.failure.y}
              width={bar.width}
              height={bar.failure.height}
            />
          )}
        </g>
      ))}
    </ChartFrame>
  );
}
