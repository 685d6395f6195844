import type { Knex } from 'knex';

/**
 * Replay (docs/webhooks.md › Replay): new webhooks for recorded entity changes of a window.
 *
 * - `entity_changes_party_created`: a replay selects the changes of one party created in a window;
 *   without it, every replay would read the whole table. One more index entry per write.
 * - `webhook_operations_one_replay`: one running replay per registration. A replay is not
 *   idempotent (each writes new webhooks), so a second one started while the first runs (a double
 *   click, two operators) would deliver the window twice; it is refused with a 409 instead.
 *
 * Who receives a change, `webhook_subscriptions`, came with it; it lives in
 * `packages/db/src/queue/functions/webhook-subscriptions.ts`, written by every migrate.
 */
export async function up(knex: Knex): Promise<void> {
  await knex.raw(`
    create index entity_changes_party_created on entity_changes (initiator_party_id, created);

    create unique index webhook_operations_one_replay on webhook_operations (registration_id)
      where action = 'replay' and state = 'running' and not dry_run;
  `);
}
