import type { Knex } from 'knex';

/** The channel that wakes dispatchers; its payload is constant so Postgres folds duplicates. */
export const WEBHOOK_DUE_CHANNEL = 'webhook_due';

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
