const pad = (value: number, length = 2) => String(value).padStart(length, '0');

/**
 * `2026-11-22 14:03:12` in the browser's time zone (or `timeZone`): sortable, unambiguous,
 * and the same whatever the browser's locale.
 */
export function formatDateTime(iso: string | null | undefined, timeZone?: string): string {
  if (!iso) return '—';
  const date = new Date(iso);
  if (Number.isNaN(date.getTime())) return '—';
  const parts = new Intl.DateTimeFormat('en-GB', {
    timeZone,
    year: 'numeric',
    month: '2-digit',
    day: '2-digit',
    hour: '2-digit',
    minute: '2-digit',
    second: '2-digit',
    hourCycle: 'h23',
  }).formatToParts(date);
  const part = (type: Intl.DateTimeFormatPartTypes) => parts.find((p) => p.type === type)?.value ?? '';
  return `${part('year')}-${part('month')}-${part('day')} ${part('hour')}:${part('minute')}:${part('second')}`;
}

/**
 * The zone `formatDateTime` shows an instant in, as an offset from UTC at that instant: `UTC`,
 * `UTC+01:00`, `UTC-05:00` (the offset, not a name: it says how to get to UTC, and it is the same
 * in every locale). Daylight saving time makes it depend on the instant.
 */
export function formatZone(iso: string | null | undefined, timeZone?: string): string {
  const date = iso ? new Date(iso) : new Date();
  if (Number.isNaN(date.getTime())) return '';
  const name =
    new Intl.DateTimeFormat('en-GB', { timeZone, timeZoneName: 'longOffset' })
      .formatToParts(date)
      .find((p) => p.type === 'timeZoneName')?.value ?? 'GMT';
  // `GMT` (or `GMT+00:00` in some engines), `GMT+01:00`, `GMT-05:30`
  return /^GMT([+-]00:?00)?$/.test(name) ? 'UTC' : name.replace('GMT', 'UTC');
}

/** `2026-11-22 14:03:12 UTC+01:00`: `formatDateTime` with its zone. */
export function formatDateTimeWithZone(iso: string | null | undefined, timeZone?: string): string {
  if (!iso || Number.isNaN(new Date(iso).getTime())) return '—';
  return `${formatDateTime(iso, timeZone)} ${formatZone(iso, timeZone)}`;
}

/** `HH:MM` of a time in the browser's time zone (or `timeZone`), for chart axes. */
export function formatClock(iso: string, timeZone?: string): string {
  return formatDateTime(iso, timeZone).slice(11, 16);
}

/** A duration for people: `850 ms`, `1.2 s`, `4 min 5 s`, `3 h 12 min`, `2 d 4 h`. */
export function formatDuration(ms: number | null | undefined): string {
  if (ms === null || ms === undefined || !Number.isFinite(ms)) return '—';
  const value = Math.max(0, ms);
  if (value < 1000) return `${Math.round(value)} ms`;
  if (value < 10_000) return `${(Math.floor(value / 100) / 10).toFixed(1)} s`;
  const seconds = Math.floor(value / 1000);
  if (seconds < 60) return `${seconds} s`;
  const minutes = Math.floor(seconds / 60);
  if (minutes < 60) return seconds % 60 ? `${minutes} min ${seconds % 60} s` : `${minutes} min`;
  const hours = Math.floor(minutes / 60);
  if (hours < 24) return minutes % 60 ? `${hours} h ${minutes % 60} min` : `${hours} h`;
  const days = Math.floor(hours / 24);
  return hours % 24 ? `${days} d ${hours % 24} h` : `${days} d`;
}

/** Durations side by side: `45 · 120 · 380 ms` when all are under a second; `—` if one is missing. */
export function formatLatencies(values: readonly (number | null)[]): string {
  if (values.length === 0 || values.some((v) => v === null || !Number.isFinite(v))) return '—';
  const known = values as number[];
  if (known.every((v) => v < 1000)) return `${known.map((v) => Math.round(v)).join(' · ')} ms`;
  return known.map((v) => formatDuration(v)).join(' · ');
}

/** `12 s ago`, `5 min ago`, `in 3 min`, `just now`, relative to `now` (epoch ms). */
export function formatRelative(iso: string | null | undefined, now: number): string {
  if (!iso) return '—';
  const at = Date.parse(iso);
  if (Number.isNaN(at)) return '—';
  const delta = at - now;
  if (Math.abs(delta) < 1000) return 'just now';
  // a relative time reads best coarse: `4 min`, not `4 min 5 s`
  const coarse = formatDuration(Math.abs(delta)).split(' ').slice(0, 2).join(' ');
  return delta < 0 ? `${coarse} ago` : `in ${coarse}`;
}

/** `1,234` */
export function formatCount(value: number): string {
  return new Intl.NumberFormat('en-US').format(value);
}

/** `97.3 %` of a share 0–1; `—` for null. */
export function formatPercent(share: number | null | undefined): string {
  if (share === null || share === undefined || !Number.isFinite(share)) return '—';
  const percent = share * 100;
  const digits = percent === 100 || percent === 0 ? 0 : 1;
  return `${percent.toFixed(digits)} %`;
}

/** The tone of a success rate: good from 99 %, a warning from 90 %, bad below; none without attempts. */
export function successRateTone(rate: number | null): 'good' | 'warn' | 'bad' | undefined {
  if (rate === null) return undefined;
  if (rate >= 0.99) return 'good';
  return rate >= 0.9 ? 'warn' : 'bad';
}

/** Pretty JSON for reading (two-space indent). */
export function prettyJson(value: unknown): string {
  return JSON.stringify(value, null, 2) ?? 'undefined';
}

/** The `YYYY-MM-DDTHH:MM` value of a `datetime-local` input for an instant, in local time. */
export function toLocalInputValue(iso: string | undefined): string {
  if (!iso) return '';
  const date = new Date(iso);
  if (Number.isNaN(date.getTime())) return '';
  return (
    `${date.getFullYear()}-${pad(date.getMonth() + 1)}-${pad(date.getDate())}` +
    `T${pad(date.getHours())}:${pad(date.getMinutes())}`
  );
}

/** The instant (ISO, UTC) of a `datetime-local` input's value, read as local time; undefined if empty. */
export function fromLocalInputValue(value: string): string | undefined {
  if (!value) return undefined;
  const date = new Date(value);
  return Number.isNaN(date.getTime()) ? undefined : date.toISOString();
}
