import { inBuckets, PRIMARY_KEY_PLANS } from '../sql';

/** `webhook_deliveries`' answer for no webhooks, in its shape: what a claim that found nothing answers. */
export const NO_DELIVERIES = `'{"webhooks":[],"changes":[],"registrations":[],"events":[]}'::json`;

/**
 * What the deliveries of webhooks need, as one JSON object: the claim's and the completion's
 * answer, which `readDeliveries` (`../deliveries.ts`) turns into a `ClaimedWebhook` per webhook.
 * Each row a delivery shares with others comes once: `webhooks` (per webhook, in the order of
 * p_ids: what only it has, and the ids of the rest), `changes` (the entity and who made the change:
 * a change fanned out to ten registrations is answered once, not ten times), `registrations` (with
 * the endpoint and its origin, the previous signing secret while its rotation's overlap lasts) and
 * `events` (the subscribed WebhookEvent). Times are ISO strings.
 * p_interrupted: ids whose previous lease ran out without a result (`interrupted`). p_bare: ids
 * recorded without a request (an open breaker's `circuit-open`): like interrupted ones, they come
 * without their entity (`payload` false), the one large value, and a change only they need is
 * answered without it, so a claim over an open endpoint's backlog builds no payloads.
 * PL/pgSQL, not SQL: its query's plan is prepared once per session and kept (a SQL function that
 * cannot be inlined is planned again in every transaction that calls it, before Postgres 18). On
 * Postgres 15 that halved the cost of a call for 64 webhooks, 1.45 against 0.74 ms (pgbench,
 * docs/performance.md › Where the CPU per delivery goes).
 */
export const WEBHOOK_DELIVERIES_FUNCTION = `
    create or replace function webhook_deliveries(p_ids bigint[], p_interrupted bigint[] default '{}',
                                                  p_bare bigint[] default '{}', p_buckets int[] default null)
    returns json
    language plpgsql stable ${PRIMARY_KEY_PLANS} as $$
    begin
      return (
        with w as materialized (
          select w.id, w.registration_id, w.attempt_count as attempt, w.group_key,
                 w.entity_change_id as change_id, w.event_id, w.trace_context,
                 w.id = any(p_interrupted) as interrupted,
                 not (w.id = any(p_interrupted) or w.id = any(p_bare)) as payload,
                 array_position(p_ids, w.id) as n
            from webhooks w
           where ${inBuckets('w')} and w.id = any(p_ids)
        )
        select json_build_object(
          'webhooks', coalesce((select json_agg(d) from (
            select id, registration_id, attempt, group_key, change_id, event_id, trace_context, interrupted, payload
              from w order by n) d), '[]'),
          'changes', coalesce((select json_agg(d) from (
            select c.id, case when u.payload then c.entity end as entity, c.initiator_party_id, c.initiator_account_id
              from (select change_id, bool_or(payload) as payload from w group by change_id) u
              join entity_changes c on c.id = u.change_id) d), '[]'),
          'registrations', coalesce((select json_agg(d) from (
            select r.id, r.target_id, t.origin, r.target_url, r.auth_type, r.auth_credentials, r.signing_secret,
                   r.party_id, webhook_previous_secret(r.previous_signing_secret, r.previous_secret_expires_at)
                     as previous_signing_secret,
                   r.should_group_continue_after_fail, r.deleted is not null as deleted
              from webhook_registrations r
              join webhook_targets t on ${inBuckets('t')} and t.id = r.target_id
             where ${inBuckets('r')} and r.id in (select registration_id from w)) d), '[]'),
          'events', coalesce((select json_agg(d) from (
            select e.id, e.type, e.entity_name, e.created, e.last_modified, e.deleted
              from webhook_events e
             where ${inBuckets('e')} and e.id in (select event_id from w)) d), '[]')));
    end
    $$;
`;
