import type { Knex } from 'knex';

/** Registrations, subscribed events, entity changes, the webhook queue and its attempts. */
export async function up(knex: Knex): Promise<void> {
  await knex.raw(`
    create table webhook_registrations (
      id serial primary key,
      party_id integer not null references parties(id),
      target_url text not null,
      should_group boolean not null default false,
      should_group_continue_after_fail boolean not null default false,
      auth_type smallint not null default 0 check (auth_type between 0 and 4),
      auth_credentials text,          -- encrypted (Basic or API key), never returned
      signing_secret text not null,   -- encrypted Standard Webhooks secret
      created_by_account_id integer references accounts(id),
      created timestamptz not null default now(),
      last_modified timestamptz,
      deleted timestamptz
    );
    create index webhook_registrations_party on webhook_registrations (party_id) where deleted is null;

    create table webhook_events (
      id serial primary key,
      registration_id integer not null references webhook_registrations(id),
      entity_name text not null,
      type smallint not null check (type between 1 and 6),
      created timestamptz not null default now(),
      last_modified timestamptz,
      deleted timestamptz,
      unique (registration_id, entity_name, type)
    );
    create index webhook_events_subscription on webhook_events (entity_name, type) where deleted is null;

    create table entity_changes (
      id bigserial primary key,
      entity_name text not null,
      type smallint not null check (type between 1 and 3),
      entity_id integer not null,
      entity jsonb not null,
      initiator_party_id integer not null,
      initiator_account_id integer,
      created timestamptz not null default now()
    );

    -- one row per (registration, group_key) that ever had a grouped webhook; its row lock
    -- serialises producers and releasers of one group (docs/webhooks.md#ordering)
    create table webhook_groups (
      registration_id integer not null references webhook_registrations(id),
      group_key text not null,
      next_seq bigint not null default 1,
      open_count integer not null default 0,
      primary key (registration_id, group_key)
    );

    create table webhooks (
      id bigserial primary key,
      registration_id integer not null references webhook_registrations(id),
      event_id integer not null references webhook_events(id),
      entity_change_id bigint not null references entity_changes(id),
      state smallint not null check (state between 1 and 7),
      attempt_count smallint not null default 0,
      next_attempt_at timestamptz not null default now(),
      group_key text,
      group_seq bigint,
      locked_by text,
      created timestamptz not null default now(),
      last_modified timestamptz,
      completed_at timestamptz
    );
    -- the claim query reads only this index: due heads and ungrouped rows
    create index webhooks_due on webhooks (next_attempt_at) where state in (1, 2);
    -- promotion finds the lowest-seq Pending of a group
    create index webhooks_pending on webhooks (registration_id, group_key, group_seq) where state = 6;
    create index webhooks_registration on webhooks (registration_id, id desc);
    create index webhooks_change on webhooks (entity_change_id);
    create index webhooks_blocking on webhooks (registration_id, group_key) where state = 4;

    create table webhook_attempts (
      id bigserial primary key,
      webhook_id bigint not null references webhooks(id) on delete cascade,
      number smallint not null,
      started_at timestamptz not null,
      duration_ms integer not null,
      status_code smallint,
      error_kind text,
      response_body text,
      created timestamptz not null default now()
    );
    create index webhook_attempts_webhook on webhook_attempts (webhook_id, number desc);
    create index webhook_attempts_created on webhook_attempts (created);
  `);
}
