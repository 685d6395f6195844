import type { WebhookRegistrationHealth } from '@platform/shared';
import { healthChartRows, type HealthBar } from '../utils/health-chart';

function Bar({ bar, kind, window }: { bar: HealthBar; kind: 'success' | 'latency'; window: string }) {
  return (
    <td data-label={window} title={bar.detail}>
      <span className="health-chart__value">{bar.text}</span>
      {/* the figure is the text; the bar only draws it */}
      <svg
        className="health-chart__track"
        viewBox="0 0 100 6"
        preserveAspectRatio="none"
        aria-hidden="true"
        focusable="false"
      >
        <rect className="health-chart__rail" width={100} height={6} rx={3} />
        {bar.fraction > 0 && (
          <rect
            className={`health-chart__bar health-chart__bar--${kind}`}
            width={Math.max(bar.fraction * 100, 1.5)}
            height={6}
            rx={3}
          />
        )}
      </svg>
    </td>
  );
}

/** The last hour beside the last day: success rate and latency p50/p95, as figures with bars. */
export function HealthChart({ health }: { health: Pick<WebhookRegistrationHealth, 'lastHour' | 'lastDay'> }) {
  return (
    <table
      className="table table--compact table--stack health-chart"
      aria-label="Success and latency, last hour against last day"
      data-testid="health-chart"
    >
      <thead>
        <tr>
          <th scope="col">Metric</th>
          <th scope="col">Last hour</th>
          <th scope="col">Last day</th>
        </tr>
      </thead>
      <tbody>
        {healthChartRows(health).map((row) => (
          <tr key={row.metric}>
            <th scope="row" className="cell--wide">
              {row.metric}
            </th>
            <Bar bar={row.hour} kind={row.kind} window="Last hour" />
            <Bar bar={row.day} kind={row.kind} window="Last day" />
          </tr>
        ))}
      </tbody>
    </table>
  );
}
