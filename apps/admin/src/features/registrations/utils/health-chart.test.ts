import { describe, expect, it } from 'vitest';
import { healthChartRows } from './health-chart';

const window = (attempts: number, successes: number, p50Ms: number | null, p95Ms: number | null) => ({
  attempts,
  successes,
  successRate: attempts ? successes / attempts : null,
  p50Ms,
  p95Ms,
});

describe('health chart', () => {
  it('sets the last hour beside the last day: success by share, latency against the slowest shown', () => {
    const rows = healthChartRows({ lastHour: window(4, 3, 50, 400), lastDay: window(100, 99, 40, 800) });
    expect(rows.map((row) => row.metric)).toEqual(['Success rate', 'Latency p50', 'Latency p95']);
    const [success, p50, p95] = rows;
    expect(success!.hour).toMatchObject({
      text: '75.0 %',
      fraction: 0.75,
      detail: '3 of 4 attempts succeeded',
    });
    expect(success!.day).toMatchObject({ text: '99.0 %', fraction: 0.99 });
    expect(p50!.hour).toMatchObject({ text: '50 ms', fraction: 50 / 800 });
    expect(p95!.hour).toMatchObject({ text: '400 ms', fraction: 0.5 });
    expect(p95!.day).toMatchObject({ text: '800 ms', fraction: 1 });
  });

  it('draws no bar for a window without attempts or without a request sent', () => {
    // every attempt of the hour was circuit-open: attempts, but no request and no latency
    const rows = healthChartRows({ lastHour: window(3, 0, null, null), lastDay: window(0, 0, null, null) });
    expect(rows[0]!.hour).toMatchObject({ text: '0 %', fraction: 0 });
    expect(rows[0]!.day).toMatchObject({ text: 'No attempts', fraction: 0 });
    expect(rows[1]!.hour).toEqual({ text: '—', fraction: 0, detail: 'No request was sent' });
  });
});
