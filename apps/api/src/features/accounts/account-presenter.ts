import type { Account, Party } from '@platform/db';
import type { AccountRead, PartyRead } from '@platform/shared';

/** The columns of an account a response may show: never its password hash or MFA secret. */
export const ACCOUNT_FIELDS = [
  'id',
  'party_id',
  'group_id',
  'email',
  'first_name',
  'last_name',
  'must_change_password',
  'mfa_enabled',
  'created',
  'last_modified',
  'deleted',
] as const;

export type AccountRow = Pick<Account, (typeof ACCOUNT_FIELDS)[number]>;

export const ACCOUNT_COLUMNS = ACCOUNT_FIELDS.map((field) => `a.${field}`);

/** The AccountRead shape of an account row; secrets (hashes, MFA secret) never leave. */
export function presentAccount(row: AccountRow): AccountRead {
  return {
    id: row.id,
    partyId: row.party_id,
    groupId: row.group_id,
    email: row.email,
    firstName: row.first_name,
    lastName: row.last_name,
    mustChangePassword: row.must_change_password,
    multiFactorEnabled: row.mfa_enabled,
    created: row.created.toISOString(),
    lastModified: row.last_modified?.toISOString() ?? null,
    deleted: row.deleted?.toISOString() ?? null,
  };
}

const PARTY_FIELDS = [
  'id',
  'type',
  'name',
  'managed_by_party_id',
  'conference_enabled',
  'created',
  'last_modified',
  'deleted',
] as const;

export type PartyRow = Pick<Party, (typeof PARTY_FIELDS)[number]>;

export const PARTY_COLUMNS = PARTY_FIELDS.map((field) => `p.${field}`);

/** The PartyRead shape of a party row. */
export function presentParty(row: PartyRow): PartyRead {
  return {
    id: row.id,
    type: row.type,
    name: row.name,
    managedByPartyId: row.managed_by_party_id,
    conferenceEnabled: row.conference_enabled,
    created: row.created.toISOString(),
    lastModified: row.last_modified?.toISOString() ?? null,
    deleted: row.deleted?.toISOString() ?? null,
  };
}
