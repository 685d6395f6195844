import type { WebhookWindowRequest } from '@platform/shared';
import { fromLocalInputValue, toLocalInputValue } from '../../../lib/format';

/**
 * The window of a recover or a replay, as the dialog's two `datetime-local` fields hold it (local
 * time, as typed). `until` empty means "until now", as the API reads an absent `until`.
 */
export interface WindowFields {
  since: string;
  until: string;
}

/** A quick pick: fills both fields at once. */
export interface WindowPick {
  id: string;
  label: string;
  since: string;
}

const HOUR = 3_600_000;

/**
 * The quick picks offered for a window ending now: the last hour, the last 24 h, the last 7 days,
 * and, while the registration fails, since its failing run started (its first failed attempt after
 * the last success), rounded down to the minute so the first failed webhook is inside the window.
 */
export function windowPicks(now: number, failingSince?: string | null): WindowPick[] {
  const picks: WindowPick[] = [
    { id: 'last-hour', label: 'Last hour', since: new Date(now - HOUR).toISOString() },
    { id: 'last-day', label: 'Last 24 h', since: new Date(now - 24 * HOUR).toISOString() },
    { id: 'last-week', label: 'Last 7 days', since: new Date(now - 7 * 24 * HOUR).toISOString() },
  ];
  if (failingSince && !Number.isNaN(Date.parse(failingSince))) {
    // the failing run starts at the first failed attempt; its webhook was created a little earlier
    // (the attempt follows the write): a few minutes of margin take it in
    const since = Date.parse(failingSince) - 10 * 60_000;
    picks.unshift({ id: 'failing', label: 'Since it started failing', since: new Date(since).toISOString() });
  }
  return picks;
}

/** The fields of a pick: `since` as local input text, `until` empty (now). */
export function fieldsOfPick(pick: WindowPick): WindowFields {
  return { since: toLocalInputValue(pick.since), until: '' };
}

/**
 * The request of the fields, or why it cannot be sent: the same rules the API applies
 * (`since` required, `until` after it), said in the dialog's words, plus "not in the future".
 */
export function windowRequest(
  fields: WindowFields,
  now: number,
): { request: WebhookWindowRequest; problem?: undefined } | { request?: undefined; problem: string } {
  const since = fromLocalInputValue(fields.since);
  if (!since) return { problem: 'Choose when the window starts.' };
  const until = fields.until ? fromLocalInputValue(fields.until) : undefined;
  if (fields.until && !until) return { problem: 'The end of the window is not a valid time.' };
  if (Date.parse(since) >= now) return { problem: 'The window must start in the past.' };
  if (until && Date.parse(until) <= Date.parse(since)) {
    return { problem: 'The end of the window must be after its start.' };
  }
  return { request: until ? { since, until } : { since } };
}

/** The browser's time zone (`Europe/Berlin`), which the window's fields are read in. */
export function localTimeZone(): string {
  return Intl.DateTimeFormat().resolvedOptions().timeZone || 'local time';
}
