import { WebhookWindowRequest } from '@platform/shared';
import { describe, expect, it } from 'vitest';
import { fieldsOfPick, windowPicks, windowRequest } from './recovery-window';
import { toLocalInputValue } from '../../../lib/format';

const now = Date.parse('2026-11-26T12:00:00Z');

describe('recovery window', () => {
  it('offers the last hour, day and week, and the failing run while there is one', () => {
    expect(windowPicks(now).map((pick) => [pick.id, pick.since])).toEqual([
      ['last-hour', '2026-11-26T11:00:00.000Z'],
      ['last-day', '2026-11-25T12:00:00.000Z'],
      ['last-week', '2026-11-19T12:00:00.000Z'],
    ]);
    const failing = windowPicks(now, '2026-11-26T09:31:00Z')[0]!;
    expect(failing.label).toBe('Since it started failing');
    // with margin for the webhook written before its first failed attempt
    expect(Date.parse(failing.since)).toBeLessThan(Date.parse('2026-11-26T09:31:00Z'));
    expect(windowPicks(now, null)).toHaveLength(3);
  });

  it('fills the fields of a pick, ending now', () => {
    const pick = windowPicks(now)[0]!;
    expect(fieldsOfPick(pick)).toEqual({ since: toLocalInputValue(pick.since), until: '' });
  });

  it('asks the API only for windows it accepts', () => {
    const since = toLocalInputValue('2026-11-26T10:00:00Z');
    const until = toLocalInputValue('2026-11-26T11:00:00Z');
    const open = windowRequest({ since, until: '' }, now);
    expect(open.request).toEqual({ since: '2026-11-26T10:00:00.000Z' });
    const closed = windowRequest({ since, until }, now);
    expect(closed.request).toEqual({ since: '2026-11-26T10:00:00.000Z', until: '2026-11-26T11:00:00.000Z' });
    for (const { request } of [open, closed])
      expect(WebhookWindowRequest.safeParse(request).success).toBe(true);

    expect(windowRequest({ since: '', until: '' }, now).problem).toMatch(/starts/);
    expect(windowRequest({ since: until, until: since }, now).problem).toMatch(/after its start/);
    expect(windowRequest({ since: until, until }, now).problem).toMatch(/after its start/);
    expect(
      windowRequest({ since: toLocalInputValue('2026-11-27T10:00:00Z'), until: '' }, now).problem,
    ).toMatch(/past/);
  });
});
