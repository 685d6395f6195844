import { formatClock, formatCount, formatDateTime, formatDuration } from '../../../lib/format';
import { Link, useLocation, useSearchParams } from '../../../lib/router';
import { ErrorState, Loading } from '../../../components/ui/feedback';
import { useWebhookStatsSeries } from '../api/get-webhook-stats-series';
import { ChartFrame } from './chart-frame';
import {
  layoutSeries,
  SERIES_RANGES,
  seriesRange,
  seriesTotals,
  type SeriesPart,
  type SeriesPoint,
} from '../utils/series';

const WIDTH = 600;
const HEIGHT = 160;
const LATENCY_HEIGHT = 60;

const PART_LABELS: Record<SeriesPart, string> = {
  successes: 'Delivered',
  otherFailures: 'Refused (4xx, redirect)',
  targetFailures: 'Target failures (5xx, timeout, connection)',
};

/** A step's start as the axis shows it: the clock, with the date when the range spans days. */
const stepLabel = (at: string, stepMinutes: number) =>
  stepMinutes >= 15 ? formatDateTime(at).slice(5, 16) : formatClock(at);

function summary(points: readonly SeriesPoint[], label: string): string {
  const totals = seriesTotals(points);
  const skips = totals.skipped ? ` ${formatCount(totals.skipped)} attempts skipped (no request sent).` : '';
  if (totals.requests === 0) return `No requests sent in the last ${label}.${skips}`;
  return (
    `${formatCount(totals.requests)} requests in the last ${label}: ${formatCount(totals.successes)} delivered, ` +
    `${formatCount(totals.targetFailures)} target failures, ${formatCount(totals.otherFailures)} refused.${skips}`
  );
}

/**
 * Deliveries over a chosen range (docs/admin.md › Deliveries over time): requests per step
 * stacked by outcome, the p50/p95 request duration below, the range in the URL (`?range=1h`), and
 * the same figures as a table. Of one registration, or of everything the operator sees.
 */
export function DeliverySeries({ registrationId }: { registrationId?: number }) {
  const { path } = useLocation();
  const params = useSearchParams();
  const asked = params.get('range');
  const range = seriesRange(asked) ?? seriesRange(null)!;
  const series = useWebhookStatsSeries(range.hours, registrationId);
  const linkTo = (key: string) => {
    const next = new URLSearchParams(params);
    next.set('range', key);
    return `${path}?${next}`;
  };

  return (
    <section className="card section" aria-labelledby="series-heading" data-testid="delivery-series">
      <div className="section__header">
        <h2 id="series-heading" className="section__title">
          Deliveries over time
        </h2>
        <nav className="segmented" aria-label="Range">
          {SERIES_RANGES.map((option) => (
            <Link
              key={option.key}
              to={linkTo(option.key)}
              className="segmented__option"
              aria-current={option.key === range.key ? 'true' : undefined}
            >
              {option.key}
            </Link>
          ))}
        </nav>
      </div>
      {asked !== null && seriesRange(asked) === null && (
        <p className="notice" role="status" data-testid="series-range-notice">
          The link asked for the range “{asked}”, which the console does not offer (1h, 6h, 24h or 48h: the
          per-minute figures are kept 48 hours); showing the last {range.label}.
        </p>
      )}
      {series.isPending ? (
        <Loading />
      ) : series.isError ? (
        <ErrorState error={series.error} onRetry={() => void series.refetch()} />
      ) : (
        <SeriesChart points={series.data.points} stepMinutes={series.data.stepMinutes} label={range.label} />
      )}
    </section>
  );
}

function SeriesChart({
  points,
  stepMinutes,
  label,
}: {
  points: readonly SeriesPoint[];
  stepMinutes: number;
  label: string;
}) {
  const layout = layoutSeries(points, WIDTH, HEIGHT, LATENCY_HEIGHT);
  const text = summary(points, label);
  return (
    <>
      <ChartFrame
        testId="series-chart"
        width={WIDTH}
        height={HEIGHT}
        yLabels={[formatCount(layout.max), formatCount(layout.max / 2), '0']}
        label={text}
        xAxis={{ points, labelOf: (point) => stepLabel(point.at, stepMinutes) }}
        caption={
          <>
            {(Object.keys(PART_LABELS) as SeriesPart[]).map((part) => (
              <span key={part} className={`legend legend--${part}`}>
                {PART_LABELS[part]}
              </span>
            ))}
            <span className="muted" data-testid="series-summary">
              {text} One bar per {formatDuration(stepMinutes * 60_000)}.
            </span>
          </>
        }
      >
        {layout.bars.map((bar) => (
          <g key={bar.at}>
            {bar.parts.map((part) => (
              <rect
                key={part.part}
                className={`chart__bar chart__bar--${part.part}`}
                x={bar.x}
                y={part.y}
                width={bar.width}
                height={part.height}
              />
            ))}
          </g>
        ))}
      </ChartFrame>
      <ChartFrame
        testId="series-latency"
        className="chart--latency"
        short
        width={WIDTH}
        height={LATENCY_HEIGHT}
        yLabels={[formatDuration(layout.latencyMax), '0']}
        label={`Request duration p50 and p95 over the last ${label}`}
        caption={
          <>
            <span className="legend legend--p50">Duration p50</span>
            <span className="legend legend--p95">p95</span>
          </>
        }
      >
        {layout.p95.map((run) => (
          <polyline
            key={`p95 ${run}`}
            className="chart__line chart__line--p95"
            points={run}
            vectorEffect="non-scaling-stroke"
          />
        ))}
        {layout.p50.map((run) => (
          <polyline
            key={`p50 ${run}`}
            className="chart__line chart__line--p50"
            points={run}
            vectorEffect="non-scaling-stroke"
          />
        ))}
      </ChartFrame>
      <details className="series-table">
        <summary>The figures as a table</summary>
        <table className="table table--compact" data-testid="series-table">
          <thead>
            <tr>
              <th scope="col">From</th>
              <th scope="col">Requests</th>
              <th scope="col">Delivered</th>
              <th scope="col">Target failures</th>
              <th scope="col">Refused</th>
              <th scope="col">Skipped</th>
              <th scope="col">p50 · p95</th>
            </tr>
          </thead>
          <tbody>
            {points
              .filter((point) => point.requests + point.skipped > 0)
              .map((point) => (
                <tr key={point.at}>
                  <td>{formatDateTime(point.at)}</td>
                  <td>{formatCount(point.requests)}</td>
                  <td>{formatCount(point.successes)}</td>
                  <td>{formatCount(point.targetFailures)}</td>
                  <td>{formatCount(point.otherFailures)}</td>
                  <td>{formatCount(point.skipped)}</td>
                  <td>
                    {formatDuration(point.p50Ms)} · {formatDuration(point.p95Ms)}
                  </td>
                </tr>
              ))}
          </tbody>
        </table>
      </details>
    </>
  );
}
