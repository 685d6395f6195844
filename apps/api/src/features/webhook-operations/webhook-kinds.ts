import { WebhookState, type BulkWebhookAction, type WebhookBulkFilter } from '@platform/shared';
import { applyOperatorAction, type Knex } from '@platform/db';
import type { Principal } from '../../auth/principal';
import { scopeToRegistrations } from '../../http/scope';
import { lastAttemptOf } from '../webhooks/webhook-presenter';
import type { BatchResult, OperationKind, OperationRow } from './operation-kinds';

/**
 * Limits a query over `webhooks as w` (joined to `webhook_registrations as r`) to a bulk filter:
 * every given field must match. The one reading of WebhookBulkFilter, for bulk actions, their dry
 * runs and the triage lines that feed them.
 */
export function applyBulkFilter(query: Knex.QueryBuilder, filter: WebhookBulkFilter): Knex.QueryBuilder {
  if (filter.registrationId !== undefined) query.where('w.registration_id', filter.registrationId);
  if (filter.states !== undefined) query.whereIn('w.state', filter.states);
  if (filter.groupKey !== undefined) query.where('w.group_key', filter.groupKey);
  if (filter.createdFrom !== undefined) query.where('w.created', '>=', filter.createdFrom);
  if (filter.createdBefore !== undefined) query.where('w.created', '<', filter.createdBefore);
  if (filter.entityName !== undefined || filter.entityId !== undefined) {
    query.whereExists((sub) => {
      sub.from('entity_changes as c').whereRaw('c.id = w.entity_change_id');
      if (filter.entityName !== undefined) sub.where('c.entity_name', filter.entityName);
      if (filter.entityId !== undefined) sub.where('c.entity_id', filter.entityId);
    });
  }
  // null matches a webhook whose last attempt has none (or that has no attempt): a triage line's key
  if (filter.errorKind !== undefined)
    query.whereRaw(`${lastAttemptOf('a.error_kind')} is not distinct from ?`, [filter.errorKind]);
  if (filter.statusCode !== undefined)
    query.whereRaw(`${lastAttemptOf('a.status_code')} is not distinct from ?`, [filter.statusCode]);
  return query;
}

/** Fills the operation's items with the ids of the webhooks `where` selects, in the caller's scope. */
async function selectWebhooks(
  trx: Knex.Transaction,
  operation: OperationRow,
  principal: Principal,
  where: (query: Knex.QueryBuilder) => void,
): Promise<number> {
  const ids = trx('webhooks as w')
    .join('webhook_registrations as r', 'r.id', 'w.registration_id')
    .select(trx.raw('?::bigint', [operation.id]), 'w.id');
  where(ids);
  scopeToRegistrations(ids, 'r', principal);
  const inserted = await trx.raw(
    `insert into webhook_operation_items (operation_id, item_id) ${ids.toQuery()}`,
  );
  return (inserted as { rowCount: number }).rowCount;
}

/** Applies an operator action to a batch of webhooks, counting what changed and what was skipped. */
async function applyToWebhooks(
  trx: Knex.Transaction,
  operation: OperationRow,
  action: BulkWebhookAction,
  ids: number[],
  now: Date,
): Promise<BatchResult> {
  const outcomes = await applyOperatorAction(trx, {
    action,
    ids,
    freshSchedule: operation.fresh_schedule,
    actionId: operation.audit_id,
    now,
  });
  const result: BatchResult = { changed: 0, skipped: {} };
  for (const id of ids) {
    // a webhook deleted since (retention) is gone: nothing to change, counted as final
    const outcome = outcomes.get(id) ?? 'final';
    if (outcome === 'changed') result.changed++;
    else result.skipped[outcome] = (result.skipped[outcome] ?? 0) + 1;
  }
  return result;
}

/** A bulk retry, abort or resolve of the webhooks matching its filter. */
export function bulkKind(action: BulkWebhookAction): OperationKind {
  return {
    select: (trx, operation, principal) =>
      selectWebhooks(trx, operation, principal, (query) =>
        applyBulkFilter(query, operation.filter as WebhookBulkFilter),
      ),
    apply: (trx, operation, ids, now) => applyToWebhooks(trx, operation, action, ids, now),
  };
}

/**
 * A recover: every Failed webhook of the registration created in the window is retried with a
 * fresh schedule (all 7 attempts again). Batches take webhooks in id order, which is each group's
 * order, so a group's recovered webhooks re-enter it in their original order, ahead of its later
 * Pending ones (promotion goes by place in the group).
 */
export const recoverKind: OperationKind = {
  select: (trx, operation, principal) =>
    selectWebhooks(trx, operation, principal, (query) => {
      const window = operation.filter as { since: string; until?: string };
      query.where('w.registration_id', operation.registration_id).where('w.state', WebhookState.Failed);
      query.where('w.created', '>=', window.since);
      if (window.until !== undefined) query.where('w.created', '<', window.until);
    }),
  apply: (trx, operation, ids, now) => applyToWebhooks(trx, operation, 'retry', ids, now),
};
