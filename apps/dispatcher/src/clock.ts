/**
 * The dispatcher's one source of time: the loop's timestamps, sleeps and deadlines, the stall
 * check of `/healthz`, attempt start times and maintenance durations all read it, so a test can
 * move time for all of them at once. Cron schedules keep their own timers (the `cron` package).
 */
export interface Clock {
  /** Milliseconds since the epoch. */
  now(): number;
  /** Calls `callback` once after `ms`; answers the handle `clearTimeout` takes. */
  setTimeout(callback: () => void, ms: number): unknown;
  clearTimeout(handle: unknown): void;
}

/** Wall time and Node's timers. */
export const systemClock: Clock = {
  now: () => Date.now(),
  setTimeout: (callback, ms) => setTimeout(callback, ms),
  clearTimeout: (handle) => clearTimeout(handle as NodeJS.Timeout),
};
