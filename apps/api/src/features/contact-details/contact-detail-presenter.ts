import type { AccountContactDetail } from '@platform/db';
import type { AccountContactDetailsRead, ContactDetailType } from '@platform/shared';

const CONTACT_DETAIL_FIELDS = [
  'id',
  'account_id',
  'type',
  'value',
  'label',
  'is_primary',
  'created',
  'last_modified',
  'deleted',
] as const;

export type ContactDetailRow = Pick<AccountContactDetail, (typeof CONTACT_DETAIL_FIELDS)[number]>;

export const CONTACT_DETAIL_COLUMNS = CONTACT_DETAIL_FIELDS.map((field) => `cd.${field}`);

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
