/**
 * Who receives a change: every live event (entityName, type) of every live registration of the
 * initiator's party, read in the party's tenant bucket `p_bucket` (a party's registrations and
 * their events are in its bucket: docs/scaling.md, R2). Enqueue fans a new change out through it; a replay asks it whether its
 * registration would have received a recorded one. A plain SQL function, inlined by the planner
 * like a view with parameters, so enqueue's plan is that of the statement written out.
 */
export const WEBHOOK_SUBSCRIPTIONS_FUNCTION = `
    create or replace function webhook_subscriptions(p_bucket int, p_party_id int, p_entity_name text, p_type smallint)
    returns table (registration_id int, should_group boolean, event_id int)
    language sql stable as $$
      select r.id, r.should_group, e.id
        from webhook_registrations r
        join webhook_events e on e.bucket = p_bucket and e.registration_id = r.id
       where r.bucket = p_bucket and r.party_id = p_party_id and r.deleted is null
         and e.entity_name = p_entity_name and e.type = p_type and e.deleted is null
    $$;
`;
