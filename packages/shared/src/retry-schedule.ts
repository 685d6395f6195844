/** The retry schedule (docs/webhooks.md#retries): waits before attempts 1..7. */
export const DEFAULT_RETRY_SCHEDULE = '0s,5m,15m,1h,6h,12h,24h';

const UNIT_MS = { ms: 1, s: 1000, m: 60_000, h: 3_600_000 } as const;

/** Parses a duration such as `15s`, `250ms`, `5m` or `1h` into milliseconds. */
export function parseDuration(text: string): number {
  const match = /^\s*(\d+(?:\.\d+)?)\s*(ms|s|m|h)\s*$/.exec(text);
  if (!match) throw new Error(`"${text}" is not a duration (use a number with ms, s, m or h)`);
  return Math.round(Number(match[1]) * UNIT_MS[match[2] as keyof typeof UNIT_MS]);
}

/** Parses `WEBHOOK_RETRY_SCHEDULE`: comma-separated waits, one per attempt. */
export function parseRetrySchedule(text: string): number[] {
  const waits = text.split(',').map(parseDuration);
  if (waits.length === 0 || waits.length > 50) throw new Error('a retry schedule has 1 to 50 attempts');
  return waits;
}
