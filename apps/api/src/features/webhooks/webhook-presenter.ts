import {
  ATTEMPT_KINDS_WITHOUT_REQUEST,
  attemptSentRequest,
  attemptSkipReason,
  WebhookState,
  type OperatorActionName,
  type WebhookAttemptRead,
  type WebhookRead,
} from '@platform/shared';

/**
 * What a webhook response shows: the webhook, its registration's party (`p`, joined by primary
 * key), and its change.
 */
export const WEBHOOK_COLUMNS = [
  'w.id',
  'w.registration_id',
  'r.party_id',
  'p.name as party_name',
  'w.event_id',
  'w.entity_change_id',
  'w.state',
  'w.attempt_count',
  'w.next_attempt_at',
  'w.group_key',
  'w.group_seq',
  'w.created',
  'w.last_modified',
  'w.completed_at',
  'c.type as event_type',
  'c.entity_name',
  'c.entity_id',
  'c.initiator_party_id',
  'c.initiator_account_id',
  'r.target_url',
] as const;

/**
 * The webhook's last attempt and last operator action, as JSON, and the name of the party whose
 * change it delivers (no foreign key holds that party: null if its row is gone), by subqueries of
 * the select list (a page's count drops them, so counting a large list never reads attempts).
 * Attempts are newest by id: a recover starts the numbers again.
 */
/**
 * A subquery of the last attempt of the webhook `w`, selecting `columns` of `webhook_attempts a`:
 * the one reading of "last attempt" (newest by id, since a recover starts the attempt numbers
 * again; index `webhook_attempts_webhook_latest`), for a webhook's read, the bulk filter and triage.
 */
export const lastAttemptOf = (columns: string): string =>
  `(select ${columns} from webhook_attempts a where a.webhook_id = w.id order by a.id desc limit 1)`;

/**
 * The last attempt of `w` that sent a request: its last real answer, read back past the skips
 * (a webhook has at most its schedule's attempts per cycle; same index).
 */
const lastRequestOf = (columns: string): string =>
  `(select ${columns} from webhook_attempts a where a.webhook_id = w.id
      and (a.error_kind is null or a.error_kind not in (${ATTEMPT_KINDS_WITHOUT_REQUEST.map((kind) => `'${kind}'`).join(', ')}))
    order by a.id desc limit 1)`;

export const WEBHOOK_SUBQUERY_COLUMNS = [
  `${lastAttemptOf(
    `json_build_object('at', a.started_at, 'statusCode', a.status_code, 'errorKind', a.error_kind)`,
  )} as last_attempt`,
  `${lastRequestOf(
    `json_build_object('at', a.started_at, 'statusCode', a.status_code, 'errorKind', a.error_kind)`,
  )} as last_request`,
  `(select json_build_object('id', o.id, 'action', o.action, 'accountId', o.account_id, 'at', o.created)
      from operator_actions o where o.id = w.last_action_id) as last_action`,
  `(select ip.name from parties ip where ip.id = c.initiator_party_id) as initiator_party_name`,
] as const;

export interface WebhookRow {
  id: number;
  registration_id: number;
  party_id: number;
  party_name: string;
  event_id: number;
  entity_change_id: number;
  state: number;
  attempt_count: number;
  next_attempt_at: Date;
  group_key: string | null;
  group_seq: number | null;
  created: Date;
  last_modified: Date | null;
  completed_at: Date | null;
  event_type: number;
  entity_name: string;
  entity_id: number;
  initiator_party_id: number;
  initiator_party_name: string | null;
  initiator_account_id: number | null;
  target_url: string;
  last_attempt: { at: string; statusCode: number | null; errorKind: string | null } | null;
  last_request: { at: string; statusCode: number | null; errorKind: string | null } | null;
  last_action: { id: number; action: OperatorActionName; accountId: number | null; at: string } | null;
  /** The last action's actor's email where the caller may see it (`actorEmailOf`). */
  last_action_email?: string | null;
}

const iso = (value: Date | null): string | null => value?.toISOString() ?? null;
const DUE_STATES: readonly number[] = [WebhookState.Created, WebhookState.Retrying];

/** The WebhookRead shape of a webhook row. */
export function presentWebhook(row: WebhookRow): WebhookRead {
  return {
    id: row.id,
    registrationId: row.registration_id,
    partyId: row.party_id,
    partyName: row.party_name,
    eventId: row.event_id,
    eventType: row.event_type,
    entityName: row.entity_name,
    entityId: row.entity_id,
    entityChangeId: row.entity_change_id,
    state: row.state,
    attemptCount: row.attempt_count,
    // the column always holds a time, but it only means something while an attempt is due
    nextAttemptAt: DUE_STATES.includes(row.state) ? row.next_attempt_at.toISOString() : null,
    groupKey: row.group_key,
    groupSeq: row.group_seq,
    initiatorPartyId: row.initiator_party_id,
    initiatorPartyName: row.initiator_party_name,
    initiatorAccountId: row.initiator_account_id,
    created: row.created.toISOString(),
    lastModified: iso(row.last_modified),
    completedAt: iso(row.completed_at),
    targetUrl: row.target_url,
    lastAttemptAt: row.last_attempt ? new Date(row.last_attempt.at).toISOString() : null,
    lastStatusCode: row.last_attempt?.statusCode ?? null,
    lastErrorKind: row.last_attempt?.errorKind ?? null,
    lastRequest: row.last_request && {
      at: new Date(row.last_request.at).toISOString(),
      statusCode: row.last_request.statusCode,
      errorKind: row.last_request.errorKind,
    },
    lastAction: row.last_action && {
      ...row.last_action,
      accountEmail: row.last_action_email ?? null,
      at: new Date(row.last_action.at).toISOString(),
    },
  };
}

export interface AttemptRow {
  id: number;
  webhook_id: number;
  number: number;
  started_at: Date;
  duration_ms: number;
  status_code: number | null;
  error_kind: string | null;
  response_body: string | null;
  request: { url: string; headers: Record<string, string> } | null;
  response_headers: Record<string, string> | null;
  created: Date;
}

/** The WebhookAttemptRead shape of a webhook_attempts row. */
export function presentAttempt(row: AttemptRow): WebhookAttemptRead {
  return {
    id: row.id,
    webhookId: row.webhook_id,
    number: row.number,
    startedAt: row.started_at.toISOString(),
    durationMs: row.duration_ms,
    statusCode: row.status_code,
    errorKind: row.error_kind,
    responseBody: row.response_body,
    sentRequest: attemptSentRequest(row.error_kind),
    skipReason: attemptSkipReason(row.error_kind),
    request: row.request,
    responseHeaders: row.response_headers,
    created: row.created.toISOString(),
  };
}
