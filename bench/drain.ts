import type { Knex } from '@platform/db';
import { WebhookState } from '@platform/shared';
import { eventually } from '@platform/testkit';
import type { Target } from './processes';

/** How a drain went, read from the database after it. */
export interface DrainFigures {
  /** Webhooks Successful. */
  deliveries: number;
  /** Attempt rows written. */
  attempts: number;
  /** From the first attempt's start to the last webhook's Successful. */
  seconds: number;
  perSecond: number;
  /**
   * Transactions that wrote attempt rows (distinct `created`, the transaction's now()): the
   * dispatcher's result flushes. Attempts per flush is how many results share one round trip.
   */
  flushes: number;
}

/**
 * Waits until `expected` webhooks are Successful: first by asking the target (a separate process,
 * so asking costs the database nothing) until it has received them, then by counting in the
 * database until the last results are written.
 */
export async function waitForDrain(
  knex: Knex,
  target: Target,
  expected: number,
  timeoutMs: number,
): Promise<void> {
  await eventually(async () => (await target.stats()).received >= expected, {
    timeoutMs: timeoutMs,
    what: `the target did not receive ${expected} deliveries`,
  });
  await eventually(async () => (await successful(knex)) >= expected, {
    timeoutMs: timeoutMs,
    what: `${expected} webhooks did not become Successful`,
  });
}

async function successful(knex: Knex): Promise<number> {
  const { rows } = await knex.raw<{ rows: { n: number }[] }>(
    `select count(*)::int as n from webhooks where state = ${WebhookState.Successful}`,
  );
  return rows[0]!.n;
}

/**
 * The drain rate of the webhooks created after `sinceId`: from the start of their first attempt
 * (the dispatcher's clock) to the latest `completed_at` (the database's `now()` of the transaction
 * that recorded it; same machine, same clock).
 */
export async function drainFigures(knex: Knex, sinceId = 0): Promise<DrainFigures> {
  const { rows } = await knex.raw<{
    rows: { deliveries: number; attempts: number; flushes: number; seconds: number | null }[];
  }>(
    `select count(*) filter (where w.state = ${WebhookState.Successful})::int as deliveries,
            (select count(*)::int from webhook_attempts a where a.webhook_id > :sinceId) as attempts,
            (select count(distinct a.created)::int from webhook_attempts a where a.webhook_id > :sinceId) as flushes,
            extract(epoch from max(w.completed_at) -
              (select min(a.started_at) from webhook_attempts a where a.webhook_id > :sinceId))::float8 as seconds
       from webhooks w
      where w.id > :sinceId`,
    { sinceId },
  );
  const { deliveries, attempts, flushes, seconds } = rows[0]!;
  const elapsed = seconds ?? NaN;
  return { deliveries, attempts, flushes, seconds: elapsed, perSecond: deliveries / elapsed };
}

/** `value` rounded to `digits` decimals, for printing. */
export const round = (value: number, digits = 0) => Number(value.toFixed(digits));
