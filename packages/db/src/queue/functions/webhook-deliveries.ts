import { PRIMARY_KEY_PLANS } from '../sql';

/**
 * What the deliveries of webhooks need, as a JSON array in the order of p_ids (times as ISO strings): the claim's and
 * the completion's answer (`ClaimedWebhook`), with the endpoint and its origin. p_interrupted: ids whose previous lease ran out
 * without a result (interrupted: true). p_bare: ids recorded without a request (an open breaker's
 * `circuit-open`): like interrupted ones, they come without their entity (null), the one large
 * value, so a claim over an open endpoint's backlog builds no payloads. The previous signing secret while its rotation's overlap
 * lasts, and the trace context of the request that wrote the webhook.
 * PL/pgSQL, not SQL: its query's plan is prepared once per session and kept (a SQL function that
 * cannot be inlined is planned again in every transaction that calls it, before Postgres 18). On
 * Postgres 15 that halved the cost of a call for 64 webhooks, 1.45 against 0.74 ms (pgbench,
 * docs/performance.md › Where the CPU per delivery goes).
 */
export const WEBHOOK_DELIVERIES_FUNCTION = `
    create or replace function webhook_deliveries(p_ids bigint[], p_interrupted bigint[] default '{}',
                                                  p_bare bigint[] default '{}')
    returns json
    language plpgsql stable ${PRIMARY_KEY_PLANS} as $$
    begin
      return (select coalesce(json_agg(d), '[]') from (
        select w.id, w.registration_id, r.target_id, t.origin, w.attempt_count as attempt, w.group_key,
               r.target_url, r.auth_type, r.auth_credentials, r.signing_secret, r.party_id as registration_party_id,
               webhook_previous_secret(r.previous_signing_secret, r.previous_secret_expires_at)
                 as previous_signing_secret,
               r.should_group_continue_after_fail, r.deleted is not null as registration_deleted,
               w.id = any(p_interrupted) as interrupted,
               case when w.id = any(p_interrupted) or w.id = any(p_bare) then null else c.entity end as entity,
               c.initiator_party_id, c.initiator_account_id,
               e.id as event_id, e.type as event_type, e.entity_name as event_entity_name,
               e.created as event_created, e.last_modified as event_last_modified, e.deleted as event_deleted,
               w.trace_context
          from webhooks w
          join webhook_registrations r on r.id = w.registration_id
          join webhook_targets t on t.id = r.target_id
          join entity_changes c on c.id = w.entity_change_id
          join webhook_events e on e.id = w.event_id
         where w.id = any(p_ids)
         order by array_position(p_ids, w.id)
      ) d);
    end
    $$;
`;
