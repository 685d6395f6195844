import type { Knex } from 'knex';

/**
 * Tracing (docs/dispatcher.md › Tracing): the W3C trace context (`traceparent`, `tracestate`) of
 * the API request that wrote a webhook, stored with it by the fan-out in the same transaction, so
 * the dispatcher's delivery spans continue that trace. Null when tracing is off (the fan-out then
 * writes no value: nothing more per row than before) and for webhooks written before.
 * `webhook_deliveries` (`packages/db/src/queue/functions/webhook-deliveries.ts`) returns it with
 * each claimed webhook.
 */
export async function up(knex: Knex): Promise<void> {
  await knex.raw(`alter table webhooks add column trace_context jsonb`);
}
