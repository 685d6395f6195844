import type { Knex } from 'knex';

/**
 * Operator recovery (docs/operator-recovery.md):
 *
 * - `operator_actions`: the audit trail, one row per operator action (single or bulk), and each
 *   webhook's `last_action_id`, so its read says who last retried, aborted or resolved it.
 * - `webhook_operations` and their `webhook_operation_items`: bulk actions, recovers and replays
 *   run in batches, each batch one transaction that also moves the operation's cursor, so an
 *   operation interrupted by a restart resumes where it stopped and no webhook is half-changed.
 * - A registration's previous signing secret and when it expires: during a rotation's overlap the
 *   deliveries carry both signatures.
 * - Attempts are read newest first by id: a recover starts the attempt numbers again at 1.
 *
 * The functions that came with it (`webhooks_operator_apply`, `webhook_target_half_open`,
 * `webhook_previous_secret`) live in `packages/db/src/queue/functions/`, written by every migrate.
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
  `);
}
