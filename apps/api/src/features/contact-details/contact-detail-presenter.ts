import type { AccountContactDetailsRead, ContactDetailType } from '@platform/shared';

export interface ContactDetailRow {
  id: number;
  account_id: number;
  type: string;
  value: string;
  label: string | null;
  is_primary: boolean;
  created: Date;
  last_modified: Date | null;
  deleted: Date | null;
}

export const CONTACT_DETAIL_COLUMNS = [
  'cd.id',
  'cd.account_id',
  'cd.type',
  'cd.value',
  'cd.label',
  'cd.is_primary',
  'cd.created',
  'cd.last_modified',
  'cd.deleted',
];

/** The AccountContactDetailsRead shape of an account_contact_details row. */
export function presentContactDetail(row: ContactDetailRow): AccountContactDetailsRead {
  return {
    id: row.id,
    accountId: row.account_id,
    // the write path only stores catalog types, so the column is always one of them
    type: row.type as ContactDetailType,
    value: row.value,
    label: row.label,
    isPrimary: row.is_primary,
    created: row.created.toISOString(),
    lastModified: row.last_modified?.toISOString() ?? null,
    deleted: row.deleted?.toISOString() ?? null,
  };
}
