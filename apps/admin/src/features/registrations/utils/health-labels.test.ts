import { describe, expect, it } from 'vitest';
import { healthBadge, statusVersion } from './health-labels';

const hour = (attempts: number, successes: number) => ({
  attempts,
  requests: attempts,
  skipped: 0,
  successes,
  successRate: attempts ? successes / attempts : null,
  p50Ms: null,
  p95Ms: null,
});

describe('health labels', () => {
  it('badges the last hour’s success rate, toned, and whether it is failing', () => {
    expect(healthBadge({ lastHour: hour(200, 199), failingSince: null })).toEqual({
      text: '99.5 %',
      title: 'Last hour: 199 of 200 requests succeeded.',
      tone: 'good',
      failingSince: null,
    });
    expect(healthBadge({ lastHour: hour(10, 0), failingSince: '2026-11-26T10:00:00Z' })).toMatchObject({
      text: '0 %',
      tone: 'bad',
      failingSince: '2026-11-26T10:00:00Z',
    });
    expect(healthBadge({ lastHour: hour(0, 0), failingSince: null })).toMatchObject({
      text: 'No attempts',
      tone: undefined,
    });
  });

  it('compares statuses whatever the timestamps’ notation', () => {
    expect(statusVersion({ status: 'disabled', statusChanged: '2026-11-26T10:00:00.000Z' })).toBe(
      statusVersion({ status: 'disabled', statusChanged: '2026-11-26T11:00:00+01:00' }),
    );
    expect(statusVersion({ status: 'active', statusChanged: null })).not.toBe(
      statusVersion({ status: 'paused', statusChanged: null }),
    );
  });
});
