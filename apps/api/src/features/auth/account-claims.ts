import { encodePermissions, TokenScope, type PartyType } from '@platform/shared';
import type { Knex } from '@platform/db';
import type { AccessClaims } from '../../auth/tokens';

interface AccountRow {
  id: number;
  email: string;
  party_id: number;
  party_name: string;
  party_type: PartyType;
  group_id: number;
  must_change_password: boolean;
  password_hash: string | null;
  mfa_enabled: boolean;
  /** The account's policy lets a login skip the second factor (integration accounts). */
  allow_skip_mfa: boolean;
}

/** The live account (not deleted, nor its party) with what its token needs; undefined if none. */
export async function findLoginAccount(
  knex: Knex,
  where: { email: string } | { id: number },
): Promise<AccountRow | undefined> {
  const query = knex('accounts as a')
    .join('parties as p', 'p.id', 'a.party_id')
    .whereNull('a.deleted')
    .whereNull('p.deleted')
    .first<AccountRow | undefined>(
      'a.id',
      'a.email',
      'a.party_id',
      'p.name as party_name',
      'p.type as party_type',
      'a.group_id',
      'a.must_change_password',
      'a.password_hash',
      'a.mfa_enabled',
      'a.allow_skip_mfa',
    );
  if ('email' in where) query.whereRaw('lower(a.email) = lower(?)', [where.email]);
  else query.where('a.id', where.id);
  return query;
}

/**
 * The access-token claims of an account: permissions from its group and counters for the
 * `telemetry` claim, computed afresh at every login and refresh.
 */
export async function accessClaimsFor(knex: Knex, account: AccountRow): Promise<AccessClaims> {
  // a deleted group grants nothing
  const permissionRows = await knex('account_group_permissions as gp')
    .join('account_groups as g', 'g.id', 'gp.group_id')
    .where('gp.group_id', account.group_id)
    .whereNull('g.deleted')
    .select<{ permission_id: number }[]>('gp.permission_id');
  return {
    accountId: account.id,
    partyId: account.party_id,
    partyName: account.party_name,
    partyType: account.party_type,
    email: account.email,
    scope: account.must_change_password ? TokenScope.ChangePassword : TokenScope.Platform,
    permissions: encodePermissions(permissionRows.map((r) => r.permission_id)),
    telemetry: await partyTelemetry(knex, account.party_id),
  };
}

/** Counters of the `telemetry` claim: the party's live units and processes. */
async function partyTelemetry(knex: Knex, partyId: number): Promise<AccessClaims['telemetry']> {
  const { rows } = await knex.raw<{ rows: { units: number; processes: number }[] }>(
    `select (select count(*) from units where party_id = :partyId and deleted is null)::int as units,
            (select count(*) from processes where party_id = :partyId and deleted is null)::int as processes`,
    { partyId },
  );
  return { UnitCount: rows[0]?.units ?? 0, ProcessCount: rows[0]?.processes ?? 0 };
}
