/**
 * How long to wait before the next attempt after attempt `attempt` (1-based) failed, or null when
 * it was the last one and the webhook is Failed. `schedule[i]` is the wait before attempt i + 1
 * (by default 0, 5 min, 15 min, 1 h, 6 h, 12 h, 24 h: docs/webhooks.md#retries). A target that answered 429 or 503 with
 * `Retry-After` is waited for at least that long, but never more than twice the scheduled wait,
 * so a target cannot park a webhook for days.
 */
export function nextAttemptDelay(
  schedule: readonly number[],
  attempt: number,
  retryAfterMs?: number,
): number | null {
  if (attempt >= schedule.length) return null;
  const scheduled = schedule[attempt]!;
  if (retryAfterMs === undefined) return scheduled;
  return Math.max(scheduled, Math.min(retryAfterMs, scheduled * 2));
}

/**
 * How long a 429 or 503 with `Retry-After` holds the whole endpoint after attempt `attempt`
 * (1-based) of one of its webhooks: what the endpoint asked for, but never more than twice the
 * step that webhook waits next (the last step after its last attempt), the same ceiling as the
 * retry (`nextAttemptDelay`); null without a usable `Retry-After` (or one of 0). The retry's
 * floor (the scheduled step) is the webhook's own business, not the endpoint's: an endpoint that
 * asks for 5 s is held 5 s, whatever that webhook's schedule says.
 */
export function endpointHoldMs(
  schedule: readonly number[],
  attempt: number,
  retryAfterMs?: number,
): number | null {
  if (retryAfterMs === undefined || retryAfterMs <= 0 || schedule.length === 0) return null;
  const step = schedule[Math.min(attempt, schedule.length - 1)]!;
  const hold = Math.min(retryAfterMs, step * 2);
  return hold > 0 ? hold : null;
}

// Every HTTP-date form (RFC 9110 5.6.7: IMF-fixdate, RFC 850, asctime) has a month name and a
// clock time. Date.parse alone is far too lenient: it reads "-5" or "1.5" as dates in the past.
const HTTP_DATE = /^(?=.*[A-Za-z]{3})(?=.*\b\d{1,2}:\d{2}:\d{2}\b)[A-Za-z0-9 ,:-]+$/;

/** A `Retry-After` header (seconds or an HTTP date) in milliseconds from `now`; undefined if absent or bad. */
export function parseRetryAfter(header: string | undefined, now: number): number | undefined {
  if (!header) return undefined;
  const text = header.trim();
  if (/^\d+$/.test(text)) return Number(text) * 1000;
  if (!HTTP_DATE.test(text)) return undefined;
  const at = Date.parse(text);
  return Number.isNaN(at) ? undefined : Math.max(0, at - now);
}
