import type { WebhookState } from '@platform/shared';
import {
  BULK_WEBHOOK_ACTIONS,
  operatorActionAllowed,
  type BulkWebhookAction,
  type WebhookIssueRead,
} from '@platform/shared';
import { webhookStateName } from '../../../lib/webhook-states';

export const WEBHOOK_ISSUE_PAGE_SIZES = [20, 50, 100] as const;
export const DEFAULT_WEBHOOK_ISSUE_PAGE_SIZE = 20;

/** The webhook issues' address: `/webhook-issues?registrationId=3&page=2`. */
export interface WebhookIssueQuery {
  registrationId?: number;
  page: number;
  pageSize: number;
}

const positiveInt = (text: string | null, max = 2_147_483_647): number | undefined => {
  if (!text || !/^[1-9]\d*$/.test(text)) return undefined;
  const value = Number(text);
  return value <= max ? value : undefined;
};

/** The query of triage's address; values the API would refuse are dropped. */
export function webhookIssueQueryFromSearch(params: URLSearchParams): WebhookIssueQuery {
  const pageSize = positiveInt(params.get('pageSize'));
  return {
    registrationId: positiveInt(params.get('registrationId')),
    page: positiveInt(params.get('page'), 1_000_000) ?? 1,
    pageSize: WEBHOOK_ISSUE_PAGE_SIZES.find((size) => size === pageSize) ?? DEFAULT_WEBHOOK_ISSUE_PAGE_SIZE,
  };
}

/** The search (with `?`, or empty) of a triage query; defaults are left out. */
export function webhookIssueQueryToSearch(query: WebhookIssueQuery): string {
  const params = new URLSearchParams();
  if (query.registrationId !== undefined) params.set('registrationId', String(query.registrationId));
  if (query.page > 1) params.set('page', String(query.page));
  if (query.pageSize !== DEFAULT_WEBHOOK_ISSUE_PAGE_SIZE) params.set('pageSize', String(query.pageSize));
  const text = params.toString();
  return text ? `?${text}` : '';
}

/**
 * Whether a bulk action applies to a line, and why not: the single-webhook rule of
 * `packages/shared` (retry only Failed; abort and resolve any non-final state) for the line's state.
 */
export function lineActionAvailability(
  action: BulkWebhookAction,
  line: Pick<WebhookIssueRead, 'state'>,
): { allowed: boolean; reason?: string } {
  if (operatorActionAllowed(action, line.state as WebhookState)) return { allowed: true };
  return {
    allowed: false,
    reason:
      action === 'retry'
        ? `Only Failed webhooks can be retried; these are ${webhookStateName(line.state)} and retry by themselves.`
        : `${webhookStateName(line.state)} webhooks are final.`,
  };
}

/** The actions of a line, in the order the row shows them. */
export const LINE_ACTIONS: readonly BulkWebhookAction[] = BULK_WEBHOOK_ACTIONS;

/**
 * The webhooks table's address showing a line's webhooks as far as its filters go: registration
 * and state (the table filters neither by error kind nor by status code, so it may show more of
 * the registration's webhooks in that state than the line counts).
 */
export function lineWebhooksPath(line: Pick<WebhookIssueRead, 'registrationId' | 'state'>): string {
  const params = new URLSearchParams({
    registrationId: String(line.registrationId),
    state: String(line.state),
  });
  return `/webhooks?${params.toString()}`;
}

/** What went wrong, in one phrase: `HTTP 500`, `timeout`, `timeout (no answer)`. */
export function lineProblem(line: Pick<WebhookIssueRead, 'errorKind' | 'lastStatusCode'>): string {
  if (line.errorKind === 'status' && line.lastStatusCode !== null) return `HTTP ${line.lastStatusCode}`;
  if (line.errorKind && line.lastStatusCode !== null)
    return `${line.errorKind} (HTTP ${line.lastStatusCode})`;
  if (line.errorKind) return line.errorKind;
  if (line.lastStatusCode !== null) return `HTTP ${line.lastStatusCode}`;
  return 'No attempt recorded';
}

/** A line's action buttons and the verb of their dialog (which explains them: BULK_ACTION_COPY). */
export const LINE_ACTION_COPY: Readonly<Record<BulkWebhookAction, { label: string; verb: string }>> = {
  retry: { label: 'Retry all', verb: 'Retry' },
  abort: { label: 'Abort all', verb: 'Abort' },
  resolve: { label: 'Resolve all', verb: 'Resolve' },
};

/** Which line a row is, for labels: `registration 3, Failed, HTTP 500`. */
export function lineName(
  line: Pick<WebhookIssueRead, 'registrationId' | 'state' | 'errorKind' | 'lastStatusCode'>,
) {
  return `registration ${line.registrationId}, ${webhookStateName(line.state)}, ${lineProblem(line)}`;
}
