import { describe, expect, it } from 'vitest';
import {
  formatClock,
  formatCount,
  formatDateTime,
  formatDateTimeWithZone,
  formatZone,
  formatDuration,
  formatLatencies,
  formatPercent,
  formatRelative,
  fromLocalInputValue,
  prettyJson,
  successRateTone,
  toLocalInputValue,
} from './format';

describe('format', () => {
  it('writes instants as sortable local date and time', () => {
    expect(formatDateTime('2026-11-22T14:03:12.456Z', 'UTC')).toBe('2026-11-22 14:03:12');
    expect(formatDateTime('2026-11-22T23:30:00Z', 'Europe/Berlin')).toBe('2026-11-23 00:30:00');
    expect(formatDateTime(null)).toBe('—');
    expect(formatDateTime('not a date')).toBe('—');
  });

  it('says the zone of a time as its offset from UTC, daylight saving time included', () => {
    expect(formatZone('2026-11-22T14:03:12Z', 'UTC')).toBe('UTC');
    expect(formatZone('2026-11-22T14:03:12Z', 'Europe/Berlin')).toBe('UTC+01:00');
    expect(formatZone('2026-07-22T14:03:12Z', 'Europe/Berlin')).toBe('UTC+02:00');
    expect(formatZone('2026-11-22T14:03:12Z', 'America/New_York')).toBe('UTC-05:00');
    expect(formatDateTimeWithZone('2026-11-22T23:30:00Z', 'Europe/Berlin')).toBe(
      '2026-11-23 00:30:00 UTC+01:00',
    );
    expect(formatDateTimeWithZone(null)).toBe('—');
    expect(formatClock('2026-11-22T09:05:59Z', 'UTC')).toBe('09:05');
  });

  it('writes durations with the unit that reads best', () => {
    expect(formatDuration(0)).toBe('0 ms');
    expect(formatDuration(849.6)).toBe('850 ms');
    expect(formatDuration(1234)).toBe('1.2 s');
    expect(formatDuration(15_000)).toBe('15 s');
    expect(formatDuration(245_000)).toBe('4 min 5 s');
    expect(formatDuration(300_000)).toBe('5 min');
    expect(formatDuration(3 * 3_600_000 + 12 * 60_000)).toBe('3 h 12 min');
    expect(formatDuration(52 * 3_600_000)).toBe('2 d 4 h');
    expect(formatDuration(null)).toBe('—');
    expect(formatDuration(-5)).toBe('0 ms');
  });

  it('writes relative times coarsely, past and future', () => {
    const now = Date.parse('2026-11-22T12:00:00Z');
    expect(formatRelative('2026-11-22T11:59:48Z', now)).toBe('12 s ago');
    expect(formatRelative('2026-11-22T11:55:55Z', now)).toBe('4 min ago');
    expect(formatRelative('2026-11-22T12:03:00Z', now)).toBe('in 3 min');
    expect(formatRelative('2026-11-22T12:00:00.300Z', now)).toBe('just now');
    expect(formatRelative(undefined, now)).toBe('—');
  });

  it('writes counts, shares and latencies', () => {
    expect(formatCount(1234567)).toBe('1,234,567');
    expect(formatPercent(0.9734)).toBe('97.3 %');
    expect(formatPercent(1)).toBe('100 %');
    expect(formatPercent(0)).toBe('0 %');
    expect(formatPercent(null)).toBe('—');
    expect(formatLatencies([45.2, 120, 380.6])).toBe('45 · 120 · 381 ms');
    expect(formatLatencies([450, 1200, 15000])).toBe('450 ms · 1.2 s · 15 s');
    expect(formatLatencies([null, null, null])).toBe('—');
  });

  it('tones success rates: good from 99 %, a warning from 90 %, bad below, none without attempts', () => {
    expect([0.995, 0.99, 0.95, 0.9, 0.5, null].map(successRateTone)).toEqual([
      'good',
      'good',
      'warn',
      'warn',
      'bad',
      undefined,
    ]);
  });

  it('round-trips datetime-local values through instants', () => {
    const iso = fromLocalInputValue('2026-11-22T14:30');
    expect(iso).toBe(new Date(2026, 10, 22, 14, 30).toISOString());
    expect(toLocalInputValue(iso)).toBe('2026-11-22T14:30');
    expect(fromLocalInputValue('')).toBeUndefined();
    expect(toLocalInputValue(undefined)).toBe('');
  });

  it('pretty-prints JSON', () => {
    expect(prettyJson({ a: [1] })).toBe('{\n  "a": [\n    1\n  ]\n}');
  });
});
