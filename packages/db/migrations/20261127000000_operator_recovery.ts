import type { Knex } from 'knex';

/**
 * Operator recovery (docs/operator-recovery.md):
 *
 * - `operator_actions`: the audit trail, one row per operator action (single or bulk), and each
 *   webhook's `last_action_id`, so its read says who last retried, aborted or resolved it.
 * - `webhook_operations` and their `webhook_operation_items`: bulk actions, recovers and replays
 *   run in batches, each batch one transaction that also moves the operation's cursor, so an
 *   operation interrupted by a restart resumes where it stopped and no webhook is half-changed.
 * - `webhooks_operator_apply`: the one home of the operator actions' state rules (spec part 3),
 *   used by the single-webhook routes and by every batch alike.
 * - A registration's previous signing secret and when it expires: during a rotation's overlap the
 *   deliveries carry both signatures.
 * - Attempts are read newest first by id: a recover starts the attempt numbers again at 1.
 */
export async function up(knex: Knex): Promise<void> {
  await knex.raw(`
    create table operator_actions (
      id bigserial primary key,
      action text not null,
      account_id int references accounts(id) on delete set null,
      party_id int not null,
      registration_id int references webhook_registrations(id),
      webhook_id bigint,
      operation_id bigint,
      filter jsonb,
      dry_run boolean not null default false,
      changed int,
      detail jsonb not null default '{}',
      created timestamptz not null default now()
    );
    create index operator_actions_created on operator_actions (created desc, id desc);
    create index operator_actions_account on operator_actions (account_id, id desc);
    create index operator_actions_registration on operator_actions (registration_id, id desc);

    alter table webhooks add column last_action_id bigint references operator_actions(id) on delete set null;

    create table webhook_operations (
      id bigserial primary key,
      action text not null check (action in ('retry', 'abort', 'resolve', 'recover', 'replay')),
      state text not null default 'running' check (state in ('running', 'done', 'failed')),
      dry_run boolean not null default false,
      fresh_schedule boolean not null default false,
      registration_id int references webhook_registrations(id),
      filter jsonb not null default '{}',
      -- who asked, as the principal the batches act for after a restart
      requested_by_account_id int references accounts(id) on delete set null,
      principal jsonb not null,
      audit_id bigint references operator_actions(id),
      total int not null default 0,
      done int not null default 0,
      changed int not null default 0,
      skipped jsonb not null default '{}',
      -- the last item processed: batches take items above it, in order
      cursor bigint not null default 0,
      error text,
      -- the API process running it, until when (another one resumes it after that)
      runner text,
      lease_until timestamptz,
      started_at timestamptz not null default now(),
      finished_at timestamptz
    );
    create index webhook_operations_running on webhook_operations (lease_until) where state = 'running';

    -- What an operation selected when it started (webhook ids; entity change ids for a replay).
    create table webhook_operation_items (
      operation_id bigint not null references webhook_operations(id) on delete cascade,
      item_id bigint not null,
      primary key (operation_id, item_id)
    );

    alter table webhook_registrations
      add column previous_signing_secret text,
      add column previous_secret_expires_at timestamptz;

    create index webhook_attempts_webhook_latest on webhook_attempts (webhook_id, id desc);
    drop index webhook_attempts_webhook;

    -- A registration's previous signing secret while its rotation's overlap lasts, else null: the
    -- one rule the deliveries and the API's test event sign by.
    create function webhook_previous_secret(p_secret text, p_expires_at timestamptz) returns text
    language sql stable as $$
      select case when p_expires_at > now() then p_secret end
    $$;

    -- As in migration 20261126000000, plus the previous signing secret while its overlap lasts.
    create or replace function webhook_deliveries(p_ids bigint[], p_interrupted bigint[] default '{}')
    returns json
    language sql stable as $$
      select coalesce(json_agg(d), '[]') from (
        select w.id, w.registration_id, r.target_id, w.attempt_count as attempt, w.group_key,
               r.target_url, r.auth_type, r.auth_credentials, r.signing_secret, r.party_id as registration_party_id,
               webhook_previous_secret(r.previous_signing_secret, r.previous_secret_expires_at)
                 as previous_signing_secret,
               r.should_group_continue_after_fail, r.deleted is not null as registration_deleted,
               w.id = any(p_interrupted) as interrupted,
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

    -- An operator says a registration's endpoint is fixed (a resume, a retry, a recover, a test
    -- event): its target's breaker half-opens at once, so the next delivery is the trial, with no
    -- cool-down to wait out. A closed breaker is left alone.
    create function webhook_target_half_open(p_registration_id int) returns void
    language sql as $$
      update webhook_targets t
         set breaker_state = 'half-open', trial_until = null, state_changed = now()
        from webhook_registrations r
       where r.id = p_registration_id and t.id = r.target_id and t.breaker_state <> 'closed'
    $$;

    -- An operator action on webhooks, the state rules of spec part 3 in one place:
    -- - abort / resolve: any webhook not final (Created, Retrying, Failed, Pending) ends as Aborted
    --   (5) / Resolved (7). One that holds its group (a head, or a Failed one blocking it) releases
    --   it, so the group's next Pending becomes due; a Pending one just leaves the chain.
    -- - retry: a Failed webhook of a live registration is due again: Retrying, or Pending when it
    --   re-enters a continue-after-fail group that has another open webhook (it is next in line by
    --   its place in the group). p_fresh starts its schedule again (attempt count 0: all 7 attempts);
    --   otherwise it keeps its count and gets one more attempt. Its target's open breaker half-opens,
    --   so the first delivery is the trial.
    -- The groups are locked first, in the order enqueue and release lock them, then the webhooks in
    -- id order (a group's webhooks in group order, so a batch re-enters them in their order). Each
    -- webhook gets p_action_id as its last operator action. Answers every id with 'changed' or why
    -- it was skipped; ids that do not exist are left out. Wakes the dispatchers when a webhook
    -- became due.
    create function webhooks_operator_apply(
      p_action text, p_ids bigint[], p_fresh boolean, p_action_id bigint, p_now timestamptz
    )
    returns table (webhook_id bigint, outcome text)
    language plpgsql as $$
    declare
      w record;
      opened int;
      woke boolean := false;
    begin
      if p_action not in ('abort', 'resolve', 'retry') then
        raise exception 'unknown operator action %', p_action;
      end if;
      perform 1 from webhook_groups g
        join (select distinct x.registration_id, x.group_key from webhooks x
               where x.id = any(p_ids) and x.group_key is not null) k using (registration_id, group_key)
       order by g.registration_id, g.group_key
         for update of g;
      for w in
        select x.id, x.registration_id, x.state, x.group_key, r.target_id,
               r.should_group_continue_after_fail as continue_after_fail, r.deleted is not null as deleted
          from webhooks x
          join webhook_registrations r on r.id = x.registration_id
         where x.id = any(p_ids)
         order by x.id
           for update of x
      loop
        webhook_id := w.id;
        if p_action in ('abort', 'resolve') then
          if w.state in (3, 5, 7) then
            outcome := 'final';
            return next;
            continue;
          end if;
          update webhooks
             set state = case p_action when 'abort' then 5 else 7 end,
                 completed_at = p_now, last_modified = p_now,
                 -- a dispatcher delivering it right now can no longer complete it
                 locked_by = null, last_action_id = p_action_id
           where id = w.id;
          if w.group_key is not null then
            if w.state = 6 then
              update webhook_groups set open_count = greatest(open_count - 1, 0)
               where registration_id = w.registration_id and group_key = w.group_key;
            elsif w.state in (1, 2) or (w.state = 4 and not w.continue_after_fail) then
              if exists (select 1 from webhook_groups_release(array[w.registration_id], array[w.group_key])) then
                woke := true;
              end if;
            end if;
          end if;
        else
          if w.state <> 4 then
            outcome := 'not-failed';
            return next;
            continue;
          end if;
          if w.deleted then
            outcome := 'registration-deleted';
            return next;
            continue;
          end if;
          opened := 1;
          if w.group_key is not null and w.continue_after_fail then
            update webhook_groups set open_count = open_count + 1
             where registration_id = w.registration_id and group_key = w.group_key
            returning open_count into opened;
          end if;
          update webhooks
             set state = case when opened > 1 then 6 else 2 end,
                 next_attempt_at = now(),
                 attempt_count = case when p_fresh then 0 else attempt_count end,
                 completed_at = null, last_modified = p_now, locked_by = null, last_action_id = p_action_id
           where id = w.id;
          if opened <= 1 then woke := true; end if;
          perform webhook_target_half_open(w.registration_id);
        end if;
        outcome := 'changed';
        return next;
      end loop;
      if woke then perform pg_notify('webhook_due', ''); end if;
    end
    $$;
  `);
}
