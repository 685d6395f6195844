import { describe, expect, it } from 'vitest';
import { healthChartRows } from './health-chart';

const window = (
  attempts: number,
  successes: number,
  p50Ms: number | null,
  p95Ms: number | null,
  skipped = 0,
) => ({
  attempts,
  requests: attempts - skipped,
  skipped,
  successes,
  successRate: attempts - skipped ? successes / (attempts - skipped) : null,
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
      detail: '3 of 4 requests succeeded',
    });
    expect(success!.day).toMatchObject({ text: '99.0 %', fraction: 0.99 });
    expect(p50!.hour).toMatchObject({ text: '50 ms', fraction: 50 / 800 });
    expect(p95!.hour).toMatchObject({ text: '400 ms', fraction: 0.5 });
    expect(p95!.day).toMatchObject({ text: '800 ms', fraction: 1 });
  });

  it('counts the success rate of requests, skips apart', () => {
    // the breaker skipped 11,388 attempts; the receiver saw 29 requests, 2 answered 2xx
    const rows = healthChartRows({
      lastHour: window(11_417, 2, 50, 90, 11_388),
      lastDay: window(0, 0, null, null),
    });
    expect(rows[0]!.hour).toMatchObject({
      text: '6.9 %',
      detail: '2 of 29 requests succeeded; 11,388 attempts skipped (no request sent)',
    });
  });

  it('draws no bar for a window without attempts or without a request sent', () => {
    // every attempt of the hour was circuit-open: attempts, but no request and no latency
    const rows = healthChartRows({
      lastHour: window(3, 0, null, null, 3),
      lastDay: window(0, 0, null, null),
    });
    expect(rows[0]!.hour).toMatchObject({
      text: 'No requests',
      fraction: 0,
      detail: '0 of 0 requests succeeded; 3 attempts skipped (no request sent)',
    });
    expect(rows[0]!.day).toMatchObject({ text: 'No attempts', fraction: 0 });
    expect(rows[1]!.hour).toEqual({ text: '—', fraction: 0, detail: 'No request was sent' });
  });
});
