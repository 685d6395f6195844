import type { AccountRead, PartyRead } from '@platform/shared';

export interface AccountRow {
  id: number;
  party_id: number;
  group_id: number;
  email: string;
  first_name: string | null;
  last_name: string | null;
  must_change_password: boolean;
  mfa_enabled: boolean;
  created: Date;
  last_modified: Date | null;
  deleted: Date | null;
}

export const ACCOUNT_COLUMNS = [
  'a.id',
  'a.party_id',
  'a.group_id',
  'a.email',
  'a.first_name',
  'a.last_name',
  'a.must_change_password',
  'a.mfa_enabled',
  'a.created',
  'a.last_modified',
  'a.deleted',
];

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

export interface PartyRow {
  id: number;
  type: number;
  name: string;
  managed_by_party_id: number | null;
  conference_enabled: boolean;
  created: Date;
  last_modified: Date | null;
  deleted: Date | null;
}

export const PARTY_COLUMNS = [
  'p.id',
  'p.type',
  'p.name',
  'p.managed_by_party_id',
  'p.conference_enabled',
  'p.created',
  'p.last_modified',
  'p.deleted',
];

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
