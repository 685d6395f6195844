import type { WebhookEvent, WebhookRegistration } from '@platform/db';
import type { WebhookEventRead, WebhookRegistrationRead } from '@platform/shared';

/** The columns of a registration a response may show: never its credentials or signing secret. */
export const REGISTRATION_FIELDS = [
  'id',
  'party_id',
  'bucket',
  'target_url',
  'should_group',
  'should_group_continue_after_fail',
  'auth_type',
  'created_by_account_id',
  'created',
  'last_modified',
  'deleted',
  'status',
  'disabled_reason',
  'status_changed',
  'rate_limit',
] as const;

/** The registration's columns and its party's name (`p`, the parties row joined on `r.party_id`). */
export const REGISTRATION_COLUMNS = [
  ...REGISTRATION_FIELDS.map((field) => `r.${field}`),
  'p.name as party_name',
];

export type RegistrationRow = Pick<WebhookRegistration, (typeof REGISTRATION_FIELDS)[number]> & {
  party_name: string;
};

const iso = (value: Date | null): string | null => value?.toISOString() ?? null;

/** The WebhookEventRead shape of a webhook_events row. */
export function presentEvent(row: WebhookEvent): WebhookEventRead {
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
export function presentRegistration(row: RegistrationRow, events: WebhookEvent[]): WebhookRegistrationRead {
  return {
    id: row.id,
    partyId: row.party_id,
    partyName: row.party_name,
    targetUrl: row.target_url,
    enabledEvents: events.map(presentEvent),
    shouldGroup: row.should_group,
    shouldGroupContinueAfterFail: row.should_group_continue_after_fail,
    targetAuthorization: { type: row.auth_type },
    createdByAccountId: row.created_by_account_id,
    created: row.created.toISOString(),
    lastModified: iso(row.last_modified),
    deleted: iso(row.deleted),
    status: row.status,
    disabledReason: row.disabled_reason,
    statusChanged: iso(row.status_changed),
    rateLimit: row.rate_limit,
  };
}
