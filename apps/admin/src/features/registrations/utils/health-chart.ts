import type { WebhookRegistrationHealth } from '@platform/shared';
import { formatCount, formatDuration, formatPercent } from '../../../lib/format';

/** One bar of the health chart: a figure of one window, and how much of its track it fills (0–1). */
export interface HealthBar {
  text: string;
  fraction: number;
  /** What the figure is made of, for the cell's title. */
  detail: string;
}

/** One metric of the health chart: the last hour beside the last day. */
export interface HealthChartRow {
  metric: 'Success rate' | 'Latency p50' | 'Latency p95';
  hour: HealthBar;
  day: HealthBar;
  /** Success rate: the more the better; latency: the less. Picks the bar colour. */
  kind: 'success' | 'latency';
}

type Window = WebhookRegistrationHealth['lastHour'];

/** What the window's skips add to a figure of its requests ("" without skips). */
export function skippedNote(window: Window): string {
  return window.skipped === 0 ? '' : `; ${formatCount(window.skipped)} attempts skipped (no request sent)`;
}

function successBar(window: Window): HealthBar {
  return {
    text:
      window.attempts === 0
        ? 'No attempts'
        : window.requests === 0
          ? 'No requests'
          : formatPercent(window.successRate),
    fraction: window.successRate ?? 0,
    detail: `${formatCount(window.successes)} of ${formatCount(window.requests)} requests succeeded${skippedNote(window)}`,
  };
}

/**
 * The bars of the health chart. Success rates fill their track by share; latencies by their
 * share of the largest latency shown, so the hour and the day compare at a glance.
 */
export function healthChartRows(
  health: Pick<WebhookRegistrationHealth, 'lastHour' | 'lastDay'>,
): HealthChartRow[] {
  const { lastHour, lastDay } = health;
  const latencies = [lastHour.p50Ms, lastHour.p95Ms, lastDay.p50Ms, lastDay.p95Ms];
  const slowest = Math.max(0, ...latencies.map((value) => value ?? 0));
  const latencyBar = (value: number | null, sent: string): HealthBar => ({
    text: formatDuration(value),
    fraction: value === null || slowest === 0 ? 0 : value / slowest,
    detail: value === null ? 'No request was sent' : sent,
  });
  return [
    { metric: 'Success rate', kind: 'success', hour: successBar(lastHour), day: successBar(lastDay) },
    {
      metric: 'Latency p50',
      kind: 'latency',
      hour: latencyBar(lastHour.p50Ms, 'Half the requests of the last hour took less'),
      day: latencyBar(lastDay.p50Ms, 'Half the requests of the last day took less'),
    },
    {
      metric: 'Latency p95',
      kind: 'latency',
      hour: latencyBar(lastHour.p95Ms, '95 % of the requests of the last hour took less'),
      day: latencyBar(lastDay.p95Ms, '95 % of the requests of the last day took less'),
    },
  ];
}
