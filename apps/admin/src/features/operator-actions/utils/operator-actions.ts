import { OPERATOR_ACTION_NAMES, type OperatorActionName, type OperatorActionRead } from '@platform/shared';
import { formatDateTimeWithZone } from '../../../lib/format';
import { webhookStateName } from '../../../lib/webhook-states';

/** The audit trail's names for people. */
export const OPERATOR_ACTION_LABELS: Readonly<Record<OperatorActionName, string>> = {
  'webhook.abort': 'Abort webhook',
  'webhook.resolve': 'Resolve webhook',
  'webhook.retry': 'Retry webhook',
  'webhook.resend': 'Resend webhook',
  'webhooks.bulk-retry': 'Bulk retry',
  'webhooks.bulk-abort': 'Bulk abort',
  'webhooks.bulk-resolve': 'Bulk resolve',
  'registration.recover': 'Recover',
  'registration.replay': 'Replay',
  'registration.test': 'Test event',
  'registration.rotate-secret': 'Rotate secret',
  'registration.pause': 'Pause registration',
  'registration.resume': 'Resume registration',
  'registration.create': 'Create registration',
  'registration.update-target': 'Change target URL',
  'registration.delete': 'Delete registration',
  'account.mfa-skip': 'Account MFA skip',
  'portal-session.create': 'Open portal session',
  'portal-session.revoke': 'Revoke portal session',
  'notifications.update': 'Set notifications',
};

export function operatorActionLabel(action: string): string {
  return OPERATOR_ACTION_LABELS[action as OperatorActionName] ?? action;
}

export const OPERATOR_ACTION_PAGE_SIZE = 20;

/** The operator actions' address: `/operator-actions?action=registration.recover&registrationId=3&accountId=2&page=2`. */
export interface OperatorActionQuery {
  action?: OperatorActionName;
  registrationId?: number;
  accountId?: number;
  page: number;
}

const positiveInt = (text: string | null | undefined, max = 2_147_483_647): number | undefined => {
  if (!text || !/^[1-9]\d*$/.test(text)) return undefined;
  const value = Number(text);
  return value <= max ? value : undefined;
};

const isActionName = (text: string | null): text is OperatorActionName =>
  text !== null && (OPERATOR_ACTION_NAMES as readonly string[]).includes(text);

/** The query of the audit page's address; values the API would refuse are dropped. */
export function operatorActionQueryFromSearch(params: URLSearchParams): OperatorActionQuery {
  const action = params.get('action');
  return {
    action: isActionName(action) ? action : undefined,
    registrationId: positiveInt(params.get('registrationId')),
    accountId: positiveInt(params.get('accountId')),
    page: positiveInt(params.get('page'), 1_000_000) ?? 1,
  };
}

/** The search (with `?`, or empty) of an audit query. */
export function operatorActionQueryToSearch(query: OperatorActionQuery): string {
  const params = new URLSearchParams();
  if (query.action) params.set('action', query.action);
  if (query.registrationId !== undefined) params.set('registrationId', String(query.registrationId));
  if (query.accountId !== undefined) params.set('accountId', String(query.accountId));
  if (query.page > 1) params.set('page', String(query.page));
  const text = params.toString();
  return text ? `?${text}` : '';
}

/** The filter fields of an audit query as the form holds them (text), and back. */
export interface OperatorActionFilterFields {
  action: string;
  registrationId: string;
  accountId: string;
}

export function operatorActionFieldsOf(query: OperatorActionQuery): OperatorActionFilterFields {
  return {
    action: query.action ?? '',
    registrationId: query.registrationId === undefined ? '' : String(query.registrationId),
    accountId: query.accountId === undefined ? '' : String(query.accountId),
  };
}

/** The query of the form's fields, from page 1, or what needs fixing first (field → message). */
export function operatorActionQueryOfFields(
  fields: OperatorActionFilterFields,
):
  | { query: OperatorActionQuery; problems?: undefined }
  | { query?: undefined; problems: Partial<OperatorActionFilterFields> } {
  const problems: Partial<OperatorActionFilterFields> = {};
  const registrationId = positiveInt(fields.registrationId.trim());
  const accountId = positiveInt(fields.accountId.trim());
  if (fields.registrationId.trim() && registrationId === undefined) {
    problems.registrationId = 'A registration id is a whole number from 1.';
  }
  if (fields.accountId.trim() && accountId === undefined) {
    problems.accountId = 'An account id is a whole number from 1.';
  }
  if (Object.keys(problems).length > 0) return { problems };
  return {
    query: {
      action: isActionName(fields.action) ? fields.action : undefined,
      registrationId,
      accountId,
      page: 1,
    },
  };
}

/** The GET /api/operator-actions query (newest first is the API's order). */
export function operatorActionApiQuery(
  query: OperatorActionQuery,
): Record<string, string | number | undefined> {
  return {
    action: query.action,
    registrationId: query.registrationId,
    accountId: query.accountId,
    PageNumber: query.page,
    PageSize: OPERATOR_ACTION_PAGE_SIZE,
  };
}

const instant = (value: unknown, zone?: string) =>
  typeof value === 'string' ? formatDateTimeWithZone(value, zone) : String(value);

const FILTER_ORDER = [
  'registrationId',
  'states',
  'entityName',
  'entityId',
  'groupKey',
  'errorKind',
  'statusCode',
  'createdFrom',
  'createdBefore',
  'since',
  'until',
];

/**
 * The filter or window an action acted on, in words: `states Failed · error status · HTTP 500 ·
 * created from 2026-11-26 10:00:00`. Unknown fields are shown as `name value`, so nothing the API
 * records is hidden. An action without a filter (a single webhook's) has none: ``; an action on
 * an empty filter acted on everything the caller sees: `all webhooks (no filter)`. `timeZone` is
 * for tests; the page shows the browser's.
 */
export function describeActionFilter(filter: Record<string, unknown> | null, timeZone?: string): string {
  if (!filter) return '';
  const parts: string[] = [];
  // known fields in one order, whatever order the API stored them in; unknown ones after
  const rank = (key: string) =>
    (FILTER_ORDER.indexOf(key) + FILTER_ORDER.length + 1) % (FILTER_ORDER.length + 1);
  const entries = Object.entries(filter).sort(([a], [b]) => rank(a) - rank(b));
  for (const [key, value] of entries) {
    if (value === undefined || value === null) continue;
    switch (key) {
      case 'registrationId':
        parts.push(`registration ${String(value)}`);
        break;
      case 'states':
        parts.push(
          `${Array.isArray(value) && value.length === 1 ? 'state' : 'states'} ${
            Array.isArray(value)
              ? value.map((state) => webhookStateName(Number(state))).join(', ')
              : String(value)
          }`,
        );
        break;
      case 'entityName':
        parts.push(`entity ${String(value)}`);
        break;
      case 'entityId':
        parts.push(`entity id ${String(value)}`);
        break;
      case 'groupKey':
        parts.push(`group ${String(value)}`);
        break;
      case 'errorKind':
        parts.push(`error ${String(value)}`);
        break;
      case 'statusCode':
        parts.push(`HTTP ${String(value)}`);
        break;
      case 'createdFrom':
        parts.push(`created from ${instant(value, timeZone)}`);
        break;
      case 'createdBefore':
        parts.push(`created before ${instant(value, timeZone)}`);
        break;
      case 'since':
        parts.push(`since ${instant(value, timeZone)}`);
        break;
      case 'until':
        parts.push(`until ${instant(value, timeZone)}`);
        break;
      default:
        parts.push(`${key} ${typeof value === 'object' ? JSON.stringify(value) : String(value)}`);
    }
  }
  return parts.length > 0 ? parts.join(' · ') : ALL_WEBHOOKS;
}

/** What an action on an empty filter acted on. */
export const ALL_WEBHOOKS = 'all webhooks (no filter)';

/** How many rows an action changed: `12`, `would change 12` (dry run), `running` (operation under way). */
export function changedLabel(entry: Pick<OperatorActionRead, 'changed' | 'dryRun' | 'operationId'>): string {
  if (entry.changed === null) return entry.operationId !== null ? 'Running…' : '—';
  return entry.dryRun ? `would change ${entry.changed}` : String(entry.changed);
}

/** What else an action recorded (`overlap 24h`, `statusCode 200`), in one line; empty for nothing. */
export function describeDetail(detail: Record<string, unknown>): string {
  return Object.entries(detail)
    .filter(([, value]) => value !== undefined && value !== null && value !== '')
    .map(([key, value]) => `${key} ${typeof value === 'object' ? JSON.stringify(value) : String(value)}`)
    .join(' · ');
}
