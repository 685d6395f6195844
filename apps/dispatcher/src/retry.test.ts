import { DEFAULT_RETRY_SCHEDULE, parseRetrySchedule } from '@platform/shared';
import { describe, expect, it } from 'vitest';
import { endpointHoldMs, nextAttemptDelay, parseRetryAfter } from './retry';

const MINUTE = 60_000;
const HOUR = 60 * MINUTE;
const SPEC = parseRetrySchedule(DEFAULT_RETRY_SCHEDULE);

describe('nextAttemptDelay', () => {
  it('waits as docs/webhooks.md#retries says after each failed attempt, and gives up after the seventh', () => {
    expect([1, 2, 3, 4, 5, 6, 7].map((attempt) => nextAttemptDelay(SPEC, attempt))).toEqual([
      5 * MINUTE,
      15 * MINUTE,
      HOUR,
      6 * HOUR,
      12 * HOUR,
      24 * HOUR,
      null,
    ]);
  });

  it('takes its length from the configured schedule', () => {
    const schedule = [0, 50, 70];
    expect(nextAttemptDelay(schedule, 1)).toBe(50);
    expect(nextAttemptDelay(schedule, 2)).toBe(70);
    expect(nextAttemptDelay(schedule, 3)).toBeNull();
  });

  it('gives a retried Failed webhook no further attempt after its extra one', () => {
    // an operator retry keeps attempt_count; the claim makes it attempt 8
    expect(nextAttemptDelay(SPEC, 8)).toBeNull();
  });

  it('waits at least as long as Retry-After asks', () => {
    expect(nextAttemptDelay(SPEC, 1, 7 * MINUTE)).toBe(7 * MINUTE);
    expect(nextAttemptDelay(SPEC, 1, 10 * MINUTE)).toBe(10 * MINUTE);
  });

  it('never waits less than the schedule, whatever Retry-After says', () => {
    expect(nextAttemptDelay(SPEC, 1, 1_000)).toBe(5 * MINUTE);
    expect(nextAttemptDelay(SPEC, 1, 0)).toBe(5 * MINUTE);
  });

  it('clamps Retry-After to twice the scheduled wait, so a target cannot park a webhook', () => {
    expect(nextAttemptDelay(SPEC, 1, 10 * MINUTE + 1)).toBe(10 * MINUTE);
    expect(nextAttemptDelay(SPEC, 1, 30 * 24 * HOUR)).toBe(10 * MINUTE);
    expect(nextAttemptDelay(SPEC, 6, 30 * 24 * HOUR)).toBe(48 * HOUR);
    expect(nextAttemptDelay(SPEC, 1, Number.POSITIVE_INFINITY)).toBe(10 * MINUTE);
  });

  it('lets Retry-After extend nothing after the last attempt', () => {
    expect(nextAttemptDelay(SPEC, 7, HOUR)).toBeNull();
  });
});

describe('parseRetryAfter', () => {
  const now = Date.parse('2026-11-22T10:00:00Z');

  it('reads delay-seconds', () => {
    expect(parseRetryAfter('120', now)).toBe(120_000);
    expect(parseRetryAfter(' 5 ', now)).toBe(5_000);
    expect(parseRetryAfter('0', now)).toBe(0);
  });

  it('reads an HTTP date as the time left until it', () => {
    expect(parseRetryAfter('Sun, 22 Nov 2026 10:02:30 GMT', now)).toBe(150_000);
    // the obsolete RFC 850 form, which recipients should still accept (RFC 9110 5.6.7)
    expect(parseRetryAfter('Sunday, 22-Nov-26 10:02:30 GMT', now)).toBe(150_000);
  });

  it('reads a date already past as no wait', () => {
    expect(parseRetryAfter('Sun, 22 Nov 2026 09:00:00 GMT', now)).toBe(0);
  });

  it('ignores a missing or malformed header', () => {
    // Date.parse alone reads '-5', '1.5' and '2026' as dates
    for (const header of [undefined, '', '  ', 'soon', '-5', '1.5', '5s', '10:00:00', 'Nov 2026']) {
      expect(parseRetryAfter(header, now), String(header)).toBeUndefined();
    }
  });
});

describe('endpointHoldMs', () => {
  it('holds the endpoint as long as it asked, up to twice the step the webhook waits next, whatever the step’s floor', () => {
    // after attempt 1 the step is 5 min: 5 s asked is 5 s held (the retry itself waits the 5 min)
    expect(endpointHoldMs(SPEC, 1, 5_000)).toBe(5_000);
    expect(nextAttemptDelay(SPEC, 1, 5_000)).toBe(5 * MINUTE);
    // a day asked after attempt 1: at most twice the 5 min step
    expect(endpointHoldMs(SPEC, 1, 24 * HOUR)).toBe(10 * MINUTE);
    // after the last attempt: the last step is the ceiling
    expect(endpointHoldMs(SPEC, 7, 72 * HOUR)).toBe(48 * HOUR);
  });

  it('holds nothing without a usable Retry-After, or for 0', () => {
    expect(endpointHoldMs(SPEC, 1, undefined)).toBeNull();
    expect(endpointHoldMs(SPEC, 1, 0)).toBeNull();
    expect(endpointHoldMs([0, 0], 1, 5_000)).toBeNull();
  });
});
