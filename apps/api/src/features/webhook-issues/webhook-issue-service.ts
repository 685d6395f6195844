import { WebhookState, type Page, type WebhookIssueRead } from '@platform/shared';
import type { z } from 'zod';
import type { Principal } from '../../auth/principal';
import type { AppDeps } from '../../deps';
import { paginate, PageQuery } from '../../http/pagination';
import { scopeToParties } from '../../http/scope';
import { wholeNumberText } from '../../http/validate';
import { lastAttemptOf } from '../webhooks/webhook-presenter';
import { presentWebhookIssue, type WebhookIssueRow } from './webhook-issue-presenter';

/** GET /api/webhook-issues: paging, optionally one registration. */
export const WebhookIssueQuery = PageQuery.extend({
  registrationId: wholeNumberText('registrationId', 1, 2147483647).optional(),
});
export type WebhookIssueQuery = z.infer<typeof WebhookIssueQuery>;

/** The states triage lists: webhooks that failed for good, and those failing and waiting to retry. */
const TROUBLED_STATES = [WebhookState.Failed, WebhookState.Retrying];

/**
 * Triage: the Failed and Retrying webhooks of the live registrations the caller may see, grouped by
 * registration, state, and the error kind and status code of each webhook's last attempt (newest
 * by id: a recover starts the numbers again), largest group first. One statement: a lateral probe
 * of `webhook_attempts_webhook_latest` per troubled webhook, then a group by. First and last seen
 * are the oldest and newest of those last attempts, the webhook's creation standing in for an
 * attempt it no longer has (attempts are pruned before webhooks) or never had.
 *
 * Cost: proportional to the Failed and Retrying webhooks (the partial indexes `webhooks_blocking`
 * and `webhooks_due` cover those states), one index probe each for its last attempt; the page and
 * its count each run the statement.
 */
export function listWebhookIssues(
  deps: AppDeps,
  principal: Principal,
  list: WebhookIssueQuery,
): Promise<Page<WebhookIssueRead>> {
  const { knex } = deps;
  const lines = knex('webhooks as w')
    .join('webhook_registrations as r', 'r.id', 'w.registration_id')
    .joinRaw(`left join lateral ${lastAttemptOf('a.error_kind, a.status_code, a.started_at')} l on true`)
    .whereIn('w.state', TROUBLED_STATES)
    .whereNull('r.deleted')
    .groupBy('r.id', 'w.state', 'l.error_kind', 'l.status_code')
    .select(
      'r.id as registration_id',
      'r.party_id',
      'r.target_url',
      'w.state',
      'l.error_kind',
      'l.status_code',
      knex.raw('count(*)::int as count'),
      knex.raw('min(coalesce(l.started_at, w.created)) as first_seen'),
      knex.raw('max(coalesce(l.started_at, w.created)) as last_seen'),
      // the oldest webhook of the line
      knex.raw('min(w.id) as sample_webhook_id'),
    );
  if (list.registrationId !== undefined) lines.where('w.registration_id', list.registrationId);
  scopeToParties(lines, 'r.party_id', principal);
  // paged over the grouped lines (paginate counts the rows of this outer query: the lines)
  const query = knex
    .from(lines.as('i'))
    .select('*')
    .orderBy([
      { column: 'count', order: 'desc' },
      { column: 'registration_id', order: 'asc' },
      { column: 'state', order: 'asc' },
      { column: 'error_kind', order: 'asc', nulls: 'last' },
      { column: 'status_code', order: 'asc', nulls: 'last' },
    ]);
  return paginate(query, list, (row: WebhookIssueRow) => presentWebhookIssue(row));
}
