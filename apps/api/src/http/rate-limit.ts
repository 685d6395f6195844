import type { Knex } from '@platform/db';
import { AppError } from './errors';

export interface RateLimitPolicy {
  /** Shown in the 429's detail. */
  name: string;
  limit: number;
  windowMs: number;
}

function windowStartOf(policy: RateLimitPolicy, now: Date): Date {
  return new Date(Math.floor(now.getTime() / policy.windowMs) * policy.windowMs);
}

/**
 * Counts one hit for `key` in the current fixed window, in Postgres so every API replica shares
 * the count; past the policy's limit it throws a 429 with `Retry-After` (the window's end).
 */
export async function consumeRateLimit(
  knex: Knex,
  policy: RateLimitPolicy,
  key: string,
  now: Date,
): Promise<void> {
  const windowStart = windowStartOf(policy, now);
  const { rows } = await knex.raw<{ rows: { hits: number }[] }>(
    `insert into rate_limit_hits (key, window_start, hits) values (?, ?, 1)
     on conflict (key, window_start) do update set hits = rate_limit_hits.hits + 1
     returning hits`,
    [`${policy.name}:${key}`, windowStart],
  );
  if ((rows[0]?.hits ?? 0) > policy.limit) {
    const retryAfter = Math.max(
      1,
      Math.ceil((windowStart.getTime() + policy.windowMs - now.getTime()) / 1000),
    );
    throw new AppError(
      'TooManyRequests',
      `Too many requests (policy ${policy.name}); retry in ${retryAfter} s`,
      undefined,
      {
        'Retry-After': String(retryAfter),
      },
    );
  }
}

/**
 * Gives back a hit `consumeRateLimit` counted at `now`, for policies that count failures only:
 * consume before the attempt (so concurrent attempts cannot overrun the limit), refund on success.
 */
export async function refundRateLimit(
  knex: Knex,
  policy: RateLimitPolicy,
  key: string,
  now: Date,
): Promise<void> {
  await knex('rate_limit_hits')
    .where({ key: `${policy.name}:${key}`, window_start: windowStartOf(policy, now) })
    .where('hits', '>', 0)
    .decrement('hits', 1);
}
