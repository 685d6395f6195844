import type { WebhookEventRead, WebhookRegistrationRead } from '@platform/shared';

/** The columns of a registration a response may show: never its credentials or signing secret. */
export const REGISTRATION_COLUMNS = [
  'r.id',
  'r.party_id',
  'r.target_url',
  'r.should_group',
  'r.should_group_continue_after_fail',
  'r.auth_type',
  'r.created_by_account_id',
  'r.created',
  'r.last_modified',
  'r.deleted',
] as const;

export interface RegistrationRow {
  id: number;
  party_id: number;
  target_url: string;
  should_group: boolean;
  should_group_continue_after_fail: boolean;
  auth_type: number;
  created_by_account_id: number | null;
  created: Date;
  last_modified: Date | null;
  deleted: Date | null;
}

export interface EventRow {
  id: number;
  registration_id: number;
  entity_name: string;
  type: number;
  created: Date;
  last_modified: Date | null;
  deleted: Date | null;
}

const iso = (value: Date | null): string | null => value?.toISOString() ?? null;

/** The WebhookEventRead shape of a webhook_events row. */
export function presentEvent(row: EventRow): WebhookEventRead {
  return {
    id: row.id,
    entityName: row.entity_name,
    type: row.type,
    created: row.created.toISOString(),
    lastModified: iso(row.last_modified),
    deleted: iso(row.deleted),
  };
}

/** The WebhookRegistrationRead shape of a registration and its events; secrets are not in the row. */
export function presentRegistration(row: RegistrationRow, events: EventRow[]): WebhookRegistrationRead {
  return {
    id: row.id,
    partyId: row.party_id,
    targetUrl: row.target_url,
    enabledEvents: events.map(presentEvent),
    shouldGroup: row.should_group,
    shouldGroupContinueAfterFail: row.should_group_continue_after_fail,
    targetAuthorization: { type: row.auth_type },
    createdByAccountId: row.created_by_account_id,
    created: row.created.toISOString(),
    lastModified: iso(row.last_modified),
    deleted: iso(row.deleted),
  };
}
