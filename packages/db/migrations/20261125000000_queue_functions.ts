import type { Knex } from 'knex';

/**
 * The dispatcher's queue steps as functions, so each is one round trip and one commit:
 * a claim, and the recording of a batch of results (seven statements before). Both hand back the
 * webhooks they lease as one JSON array, built by one function (`webhook_deliveries`), so a
 * claimed webhook and a group's next webhook leased on its release look alike. Operators' abort and resolve release groups
 * through the same function as the dispatcher, so there is one implementation of the release.
 *
 * Both are VOLATILE (the default): in READ COMMITTED each statement inside takes a fresh snapshot,
 * so a statement after the group lock sees what a producer holding that lock committed meanwhile
 * (one statement that waited for the lock would still read with its older snapshot and could
 * strand a group without a head).
 */
export async function up(knex: Knex): Promise<void> {
  await knex.raw(`
    -- Releases groups whose head ended: each loses one open webhook, and its oldest Pending (lowest
    -- group_seq) becomes the new head, Created and due now; or, given p_lease_to, leased to that
    -- dispatcher in the same update (as webhooks_lease would: attempt counted, Aborted if its
    -- registration was deleted). Locks the group rows first, in the fixed order every writer of a
    -- group uses. Returns the promoted webhook ids.
    create function webhook_groups_release(
      p_registration_ids int[], p_group_keys text[],
      p_lease_to text default null, p_lease_ms float8 default null
    )
    returns setof bigint
    language plpgsql as $$
    begin
      perform 1 from webhook_groups g
        join (select distinct * from unnest(p_registration_ids, p_group_keys)) as r(registration_id, group_key)
          using (registration_id, group_key)
       order by g.registration_id, g.group_key
         for update of g;
      return query
      with released as (
        select distinct registration_id, group_key
          from unnest(p_registration_ids, p_group_keys) as r(registration_id, group_key)
      ),
      decremented as (
        update webhook_groups g set open_count = greatest(g.open_count - 1, 0)
          from released r
         where g.registration_id = r.registration_id and g.group_key = r.group_key
        returning g.registration_id, g.group_key, g.open_count
      ),
      heads as (
        select (select w.id from webhooks w
                 where w.registration_id = d.registration_id and w.group_key = d.group_key and w.state = 6
                 order by w.group_seq limit 1) as id
          from decremented d
         where d.open_count > 0
      )
      update webhooks w
         set state = case when p_lease_to is null or r.deleted is null then 1 else 5 end,
             next_attempt_at = case when p_lease_to is null then now()
                                    else now() + make_interval(secs => p_lease_ms / 1000.0) end,
             locked_by = case when r.deleted is null then p_lease_to end,
             attempt_count = w.attempt_count + case when p_lease_to is not null and r.deleted is null then 1 else 0 end,
             completed_at = case when p_lease_to is null or r.deleted is null then null else now() end,
             last_modified = now()
        from heads h, webhook_registrations r
       where w.id = h.id and r.id = w.registration_id
      returning w.id;
    end
    $$;

    -- What the deliveries of webhooks need, as a JSON array (times as ISO strings).
    create function webhook_deliveries(p_ids bigint[])
    returns json
    language sql stable as $$
      select coalesce(json_agg(d), '[]') from (
        select w.id, w.registration_id, w.attempt_count as attempt, w.group_key,
               r.target_url, r.auth_type, r.auth_credentials, r.signing_secret, r.party_id as registration_party_id,
               r.should_group_continue_after_fail, r.deleted is not null as registration_deleted,
               c.entity, c.initiator_party_id, c.initiator_account_id,
               e.id as event_id, e.type as event_type, e.entity_name as event_entity_name,
               e.created as event_created, e.last_modified as event_last_modified, e.deleted as event_deleted
          from webhooks w
          join webhook_registrations r on r.id = w.registration_id
          join entity_changes c on c.id = w.entity_change_id
          join webhook_events e on e.id = w.event_id
         where w.id = any(p_ids)
      ) d
    $$;

    -- Leases webhooks to a dispatcher for p_lease_ms and answers what their deliveries need, as
    -- a JSON array: each claim counts an attempt. A webhook whose registration was deleted after
    -- it was written is Aborted instead (registration_deleted: true), never delivered.
    create function webhooks_lease(p_ids bigint[], p_dispatcher_id text, p_lease_ms float8)
    returns json
    language plpgsql as $$
    declare
      leased bigint[];
    begin
      with updated as (
        update webhooks w
           set next_attempt_at = now() + make_interval(secs => p_lease_ms / 1000.0),
               locked_by = case when r.deleted is null then p_dispatcher_id end,
               attempt_count = w.attempt_count + case when r.deleted is null then 1 else 0 end,
               state = case when r.deleted is null then w.state else 5 end,
               completed_at = case when r.deleted is null then w.completed_at else now() end
          from webhook_registrations r
         where w.id = any(p_ids) and r.id = w.registration_id
        returning w.id
      )
      select array_agg(id) into leased from updated;
      return webhook_deliveries(leased);
    end
    $$;

    -- Records a batch of delivery results: the state update guarded by the lease (a dispatcher
    -- whose lease ran out cannot overwrite newer state), one attempt row per applied result, and
    -- the release of the groups whose head ended. Group rows are locked first. The new heads of
    -- the released groups are leased straight to the calling dispatcher (p_lease_ms), which
    -- spares an ordered group a claim's round trip per webhook. Answers
    -- { "applied": [ids whose results were applied], "leased": [as webhooks_lease] }.
    create function webhooks_complete(
      p_dispatcher_id text, p_lease_ms float8,
      p_ids bigint[], p_states smallint[], p_retry_delays_ms float8[],
      p_attempts smallint[], p_started_at timestamptz[], p_durations_ms int[],
      p_status_codes smallint[], p_error_kinds text[], p_response_bodies text[],
      p_registration_ids int[], p_group_keys text[], p_releases boolean[]
    )
    returns json
    language plpgsql as $$
    declare
      applied bigint[];
      promoted bigint[];
      release_registrations int[];
      release_keys text[];
    begin
      perform 1 from webhook_groups g
        join (select distinct registration_id, group_key
                from unnest(p_registration_ids, p_group_keys, p_releases) as r(registration_id, group_key, releases)
               where releases and group_key is not null) as r
          using (registration_id, group_key)
       order by g.registration_id, g.group_key
         for update of g;

      with results as (
        select * from unnest(p_ids, p_states, p_retry_delays_ms) as r(id, state, retry_delay_ms)
      ),
      updated as (
        update webhooks w
           set state = r.state,
               next_attempt_at = case when r.retry_delay_ms is null then w.next_attempt_at
                                      else now() + make_interval(secs => r.retry_delay_ms / 1000.0) end,
               locked_by = null,
               last_modified = now(),
               completed_at = case when r.state in (3, 4) then now() end
          from results r
         where w.id = r.id and w.locked_by = p_dispatcher_id and w.state in (1, 2)
        returning w.id
      )
      select coalesce(array_agg(id), '{}') into applied from updated;

      insert into webhook_attempts (webhook_id, number, started_at, duration_ms, status_code, error_kind, response_body)
      select r.id, r.attempt, r.started_at, r.duration_ms, r.status_code, r.error_kind, r.response_body
        from unnest(p_ids, p_attempts, p_started_at, p_durations_ms, p_status_codes, p_error_kinds, p_response_bodies)
               as r(id, attempt, started_at, duration_ms, status_code, error_kind, response_body)
       where r.id = any(applied);

      select array_agg(r.registration_id), array_agg(r.group_key)
        into release_registrations, release_keys
        from unnest(p_ids, p_registration_ids, p_group_keys, p_releases) as r(id, registration_id, group_key, releases)
       where r.releases and r.group_key is not null and r.id = any(applied);
      if release_registrations is not null then
        promoted := array(select webhook_groups_release(release_registrations, release_keys, p_dispatcher_id, p_lease_ms));
      end if;

      return json_build_object(
        'applied', to_json(applied),
        'leased', case when promoted is null then '[]'::json else webhook_deliveries(promoted) end
      );
    end
    $$;
  `);
}
