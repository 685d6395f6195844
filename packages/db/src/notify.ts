import type { Knex } from 'knex';

/** The channel that wakes dispatchers; its payload is constant so Postgres folds duplicates. */
export const WEBHOOK_DUE_CHANNEL = 'webhook_due';

/** Queues the wake-up notification; Postgres delivers it when the transaction commits. */
export async function notifyWebhookDue(trx: Knex | Knex.Transaction): Promise<void> {
  await trx.raw(`select pg_notify('${WEBHOOK_DUE_CHANNEL}', '')`);
}
