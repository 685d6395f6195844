import type { Knex } from 'knex';

/**
 * The channel that wakes dispatchers. Its payload is constant ('') so Postgres folds a
 * transaction's duplicates into one, except for the first wake-up of an enqueueing transaction,
 * which names the webhooks it made claimable (`DUE_IDS_PREFIX`).
 */
export const WEBHOOK_DUE_CHANNEL = 'webhook_due';

/**
 * The payload of the first wake-up of a transaction that enqueued webhooks: `due:` and the ids it
 * made claimable, comma-separated, at most `DUE_IDS_MAX`. A dispatcher holding nothing of their
 * origins claims those rows alone (`webhooks_claim_notified`, docs/dispatcher.md › The notified
 * rows' claim) instead of walking the whole queue. The transaction's later wake-ups send '' (one
 * fair claim), which Postgres folds.
 */
export const DUE_IDS_PREFIX = 'due:';

/** The most ids one wake-up names; a transaction that made more claimable sends '' (the fair claim). */
export const DUE_IDS_MAX = 64;

/** The ids a `due:` payload names; undefined for any other payload (or a malformed one). */
export function parseDueIds(payload: string | undefined): number[] | undefined {
  if (!payload?.startsWith(DUE_IDS_PREFIX)) return undefined;
  const ids = payload.slice(DUE_IDS_PREFIX.length).split(',').map(Number);
  return ids.length > 0 && ids.length <= DUE_IDS_MAX && ids.every((id) => Number.isSafeInteger(id) && id > 0)
    ? ids
    : undefined;
}

/**
 * The payload on `WEBHOOK_DUE_CHANNEL` that says deliveries stopped somewhere: a registration was
 * paused or disabled, or an endpoint is held by a `Retry-After`. Every dispatcher then hands back
 * what it buffered of them (`stoppedDeliveries`). Constant too, and rare, so it folds as well.
 */
export const DELIVERIES_STOPPED_PAYLOAD = 'stopped';

/** Queues the wake-up notification; Postgres delivers it when the transaction commits. */
export async function notifyWebhookDue(trx: Knex | Knex.Transaction): Promise<void> {
  await trx.raw(`select pg_notify('${WEBHOOK_DUE_CHANNEL}', '')`);
}

/** Queues the `stopped` notification (`DELIVERIES_STOPPED_PAYLOAD`), delivered on commit. */
export async function notifyDeliveriesStopped(trx: Knex | Knex.Transaction): Promise<void> {
  await trx.raw(`select pg_notify('${WEBHOOK_DUE_CHANNEL}', '${DELIVERIES_STOPPED_PAYLOAD}')`);
}
