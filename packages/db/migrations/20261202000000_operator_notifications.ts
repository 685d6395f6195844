import type { Knex } from 'knex';

/**
 * Notifications to operators (docs/admin.md#notifications, docs/dispatcher.md#operator-notifications):
 * per party, who hears that a registration was disabled or that an endpoint's breaker stayed
 * open, and the outbox of the operator webhook.
 *
 * - `webhook_notification_settings`: one row per party that configured them. `emails` null: the
 *   default recipients (the party's accounts holding a Webhook permission, as before); an empty
 *   array: no mail. `webhook_url` null: no operator webhook; its `webhook_secret` (sealed, a
 *   Standard Webhooks `whsec_` secret) signs it. `breaker_open_minutes`: how long a breaker stays
 *   open before it is told.
 * - `webhook_targets.open_since`: when the breaker last left `closed` (null while closed), and
 *   `open_notified_at`: when that opening was told, so each opening is told once.
 * - `operator_notifications`: the operator webhooks to send, written in the transaction of the
 *   event; the dispatcher sends them (signed) and retries them.
 */
export async function up(knex: Knex): Promise<void> {
  await knex.raw(`
    create table webhook_notification_settings (
      party_id int primary key references parties(id) on delete cascade,
      emails text[],
      webhook_url text,
      webhook_secret text,
      breaker_open_minutes int not null default 15 check (breaker_open_minutes between 1 and 1440),
      last_modified timestamptz not null default now(),
      last_modified_by_account_id int references accounts(id) on delete set null,
      check ((webhook_url is null) = (webhook_secret is null))
    );

    alter table webhook_targets add column open_since timestamptz, add column open_notified_at timestamptz;
    update webhook_targets set open_since = state_changed where breaker_state <> 'closed';
    create index webhook_targets_open_untold on webhook_targets (open_since)
      where open_since is not null and open_notified_at is null;

    create table operator_notifications (
      id bigserial primary key,
      party_id int not null references parties(id) on delete cascade,
      kind text not null check (kind in ('registration-disabled', 'breaker-open')),
      payload jsonb not null,
      url text not null,
      attempts smallint not null default 0,
      next_attempt_at timestamptz not null default now(),
      delivered_at timestamptz,
      failed_at timestamptz,
      last_status smallint,
      last_error text,
      created timestamptz not null default now()
    );
    create index operator_notifications_due on operator_notifications (next_attempt_at)
      where delivered_at is null and failed_at is null;
    create index operator_notifications_party on operator_notifications (party_id, created desc);
  `);
}
