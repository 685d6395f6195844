import type { ReactNode } from 'react';

/**
 * The frame every console chart shares: a figure with the value axis (HTML, so it stays legible
 * on a narrow screen), the plot (an SVG of `width` × `height` stretched to the width available,
 * named by `label` for assistive technology), optional time labels (first, middle, last point)
 * and the caption. Each chart draws its own marks as `children`.
 */
export function ChartFrame<T>({
  testId,
  className,
  short = false,
  width,
  height,
  yLabels,
  label,
  xAxis,
  caption,
  children,
}: {
  testId: string;
  /** A modifier beside `chart` (`chart--latency`). */
  className?: string;
  /** The short plot (`chart__body--short`) of a chart below another. */
  short?: boolean;
  width: number;
  height: number;
  /** The value axis from top to bottom. */
  yLabels: readonly string[];
  label: string;
  xAxis?: { points: readonly T[]; labelOf: (point: T) => string };
  caption: ReactNode;
  children: ReactNode;
}) {
  return (
    <figure className={className ? `chart ${className}` : 'chart'} data-testid={testId}>
      <div className={short ? 'chart__body chart__body--short' : 'chart__body'}>
        <div className="chart__y-axis" aria-hidden="true">
          {yLabels.map((text, index) => (
            <span key={index}>{text}</span>
          ))}
        </div>
        <svg
          className="chart__plot"
          viewBox={`0 0 ${width} ${height}`}
          preserveAspectRatio="none"
          role="img"
          aria-label={label}
        >
          {children}
        </svg>
        {xAxis && <XAxis {...xAxis} />}
      </div>
      <figcaption className="chart__caption">{caption}</figcaption>
    </figure>
  );
}

function XAxis<T>({ points, labelOf }: { points: readonly T[]; labelOf: (point: T) => string }) {
  const labelAt = (index: number) => (points[index] === undefined ? '' : labelOf(points[index]));
  const last = points.length - 1;
  return (
    <div className="chart__x-axis" aria-hidden="true">
      <span>{labelAt(0)}</span>
      <span>{labelAt(Math.round(last / 2))}</span>
      <span>{labelAt(last)}</span>
    </div>
  );
}
