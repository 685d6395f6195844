import type { Knex } from 'knex';

/** Multi-factor authentication: replay guard, one-time recovery codes, single-use MFA login tokens. */
export async function up(knex: Knex): Promise<void> {
  await knex.raw(`
    -- accounts.mfa_secret holds the TOTP secret sealed by the secret box (pending until
    -- mfa_enabled); the last time step a code was accepted for, so a code works once
    alter table accounts add column mfa_last_used_step bigint;

    -- ten per enrolment, shown once; stored as SHA-256 of the normalised code (80 random bits,
    -- so a plain hash is beyond brute force)
    create table mfa_recovery_codes (
      id serial primary key,
      account_id integer not null references accounts(id),
      code_hash text not null,
      used_at timestamptz,
      created timestamptz not null default now()
    );
    create index mfa_recovery_codes_account on mfa_recovery_codes (account_id) where used_at is null;

    -- one row per mfaToken issued by a password login; used_at makes it single-use
    create table mfa_login_tokens (
      jti uuid primary key,
      account_id integer not null references accounts(id),
      issued_at timestamptz not null default now(),
      expires_at timestamptz not null,
      used_at timestamptz
    );
    create index mfa_login_tokens_account on mfa_login_tokens (account_id);
    create index mfa_login_tokens_expires on mfa_login_tokens (expires_at);
  `);
}
