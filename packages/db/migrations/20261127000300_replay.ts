import type { Knex } from 'knex';

/**
 * Replay (docs/webhooks.md › Replay): new webhooks for recorded entity changes of a window.
 *
 * - `webhook_subscriptions`: who receives a change, the rule of spec 6.1.2 in one place: every
 *   live event (entityName, type) of every live registration of the initiator's party. Enqueue
 *   fans a new change out through it; a replay asks it whether its registration would have
 *   received a recorded one. A plain SQL function, inlined by the planner like a view with
 *   parameters, so enqueue's plan does not change.
 * - `entity_changes_party_created`: a replay selects the changes of one party created in a window;
 *   without it, every replay would read the whole table. One more index entry per write.
 * - `webhook_operations_one_replay`: one running replay per registration. A replay is not
 *   idempotent (each writes new webhooks), so a second one started while the first runs (a double
 *   click, two operators) would deliver the window twice; it is refused with a 409 instead.
 */
export async function up(knex: Knex): Promise<void> {
  await knex.raw(`
    create function webhook_subscriptions(p_party_id int, p_entity_name text, p_type smallint)
    returns table (registration_id int, should_group boolean, event_id int)
    language sql stable as $$
      select r.id, r.should_group, e.id
        from webhook_registrations r
        join webhook_events e on e.registration_id = r.id
       where r.party_id = p_party_id and r.deleted is null
         and e.entity_name = p_entity_name and e.type = p_type and e.deleted is null
    $$;

    create index entity_changes_party_created on entity_changes (initiator_party_id, created);

    create unique index webhook_operations_one_replay on webhook_operations (registration_id)
      where action = 'replay' and state = 'running' and not dry_run;
  `);
}
