import type { WebhookIssueRead } from '@platform/shared';

/** One triage line as the query groups it. */
export interface WebhookIssueRow {
  registration_id: number;
  party_id: number;
  target_url: string;
  state: number;
  error_kind: string | null;
  status_code: number | null;
  count: number;
  first_seen: Date;
  last_seen: Date;
  sample_webhook_id: number;
}

/**
 * The WebhookIssueRead shape of a triage line. Its `filter` is the line's own key, nulls included
 * (`errorKind: null` selects webhooks whose last attempt has no error kind, or that have none), so
 * a bulk action given it selects exactly the webhooks counted here, as long as none moved since.
 */
export function presentWebhookIssue(row: WebhookIssueRow): WebhookIssueRead {
  return {
    registrationId: row.registration_id,
    partyId: row.party_id,
    targetUrl: row.target_url,
    state: row.state,
    errorKind: row.error_kind,
    lastStatusCode: row.status_code,
    count: row.count,
    firstSeen: row.first_seen.toISOString(),
    lastSeen: row.last_seen.toISOString(),
    sampleWebhookId: row.sample_webhook_id,
    filter: {
      registrationId: row.registration_id,
      states: [row.state],
      errorKind: row.error_kind,
      statusCode: row.status_code,
    },
  };
}
