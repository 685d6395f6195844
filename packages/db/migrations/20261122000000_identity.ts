import type { Knex } from 'knex';

/** Parties, accounts, permissions and the auth bookkeeping tables. */
export async function up(knex: Knex): Promise<void> {
  await knex.raw(`
    create table parties (
      id serial primary key,
      type smallint not null check (type in (1, 2, 3, 5, 7, 13, 14)),
      name text not null check (length(name) between 1 and 200),
      managed_by_party_id integer references parties(id),
      conference_enabled boolean not null default false,
      created timestamptz not null default now(),
      last_modified timestamptz,
      deleted timestamptz
    );
    create index parties_managed_by on parties (managed_by_party_id) where deleted is null;

    create table permissions (
      id smallint primary key,
      name text not null unique,
      resource text not null,
      action smallint not null check (action between 0 and 3)
    );

    create table account_groups (
      id serial primary key,
      party_id integer references parties(id),
      name text not null,
      created timestamptz not null default now(),
      last_modified timestamptz,
      deleted timestamptz
    );

    create table account_group_permissions (
      group_id integer not null references account_groups(id),
      permission_id smallint not null references permissions(id),
      primary key (group_id, permission_id)
    );

    create table accounts (
      id serial primary key,
      party_id integer not null references parties(id),
      group_id integer not null references account_groups(id),
      email text not null check (length(email) between 3 and 254),
      first_name text,
      last_name text,
      password_hash text,
      must_change_password boolean not null default false,
      allow_skip_mfa boolean not null default false,
      mfa_secret text,
      mfa_enabled boolean not null default false,
      recovery_failures smallint not null default 0,
      recovery_blocked_until timestamptz,
      created timestamptz not null default now(),
      last_modified timestamptz,
      deleted timestamptz
    );
    create unique index accounts_email on accounts (lower(email)) where deleted is null;
    create index accounts_party on accounts (party_id) where deleted is null;

    create table account_contact_details (
      id serial primary key,
      account_id integer not null references accounts(id),
      type text not null,
      value text not null,
      label text,
      is_primary boolean not null default false,
      created timestamptz not null default now(),
      last_modified timestamptz,
      deleted timestamptz
    );
    create index account_contact_details_account on account_contact_details (account_id) where deleted is null;

    -- one row per refresh token ever issued; family_id ties every token descended from one login,
    -- so presenting a used token can revoke them all
    create table refresh_tokens (
      jti uuid primary key,
      family_id uuid not null,
      account_id integer not null references accounts(id),
      issued_at timestamptz not null default now(),
      expires_at timestamptz not null,
      used_at timestamptz,
      revoked_at timestamptz
    );
    create index refresh_tokens_family on refresh_tokens (family_id);
    create index refresh_tokens_expires on refresh_tokens (expires_at);

    create table recovery_codes (
      id serial primary key,
      account_id integer not null references accounts(id),
      code_hash text not null,
      expires_at timestamptz not null,
      used_at timestamptz,
      created timestamptz not null default now()
    );
    create index recovery_codes_account on recovery_codes (account_id, created desc);

    -- fixed-window counters shared by every API replica
    create table rate_limit_hits (
      key text not null,
      window_start timestamptz not null,
      hits integer not null,
      primary key (key, window_start)
    );

    create table mail_outbox (
      id bigserial primary key,
      to_address text not null,
      subject text not null,
      text_body text not null,
      kind text not null,
      created timestamptz not null default now(),
      sent_at timestamptz
    );
    create index mail_outbox_to on mail_outbox (lower(to_address), created desc);
  `);
}
