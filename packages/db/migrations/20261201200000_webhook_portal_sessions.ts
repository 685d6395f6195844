import type { Knex } from 'knex';

/**
 * The endpoint portal (docs/portal.md): one row per portal session a platform opened for a party.
 * The session's token carries only its id; the scope (party, registrations, actions) is read from
 * here on every request, so revoking a session (`revoked_at`) ends its token at once.
 * `registration_ids` null: every registration of the party. `actions` always holds `read`.
 */
export async function up(knex: Knex): Promise<void> {
  await knex.raw(`
    create table webhook_portal_sessions (
      id uuid primary key,
      party_id int not null references parties(id),
      registration_ids int[],
      actions text[] not null,
      allowed_origins text[] not null default '{}',
      theme jsonb not null default '{}',
      expires_at timestamptz not null,
      created timestamptz not null default now(),
      created_by_account_id int references accounts(id) on delete set null,
      revoked_at timestamptz,
      revoked_by_account_id int references accounts(id) on delete set null
    );
    create index webhook_portal_sessions_party on webhook_portal_sessions (party_id, created desc);
  `);
}
