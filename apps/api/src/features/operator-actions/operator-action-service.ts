import type { OperatorActionName } from '@platform/shared';
import type { Knex } from '@platform/db';
import type { Principal } from '../../auth/principal';

/** What an audited operator action records, besides who did it and when. */
export interface OperatorActionRecord {
  action: OperatorActionName;
  registrationId?: number | null;
  webhookId?: number | null;
  operationId?: number | null;
  /** The filter or window acted on. */
  filter?: Record<string, unknown> | null;
  dryRun?: boolean;
  /** Rows changed; null while an operation runs (its batches add to it). */
  changed?: number | null;
  detail?: Record<string, unknown>;
}

/**
 * Writes one row of the audit trail (`operator_actions`) in the action's own transaction, so an
 * action and its record land together or not at all. Returns its id, which the webhooks it
 * changes record as their last action.
 */
export async function recordOperatorAction(
  trx: Knex.Transaction,
  principal: Principal,
  record: OperatorActionRecord,
): Promise<number> {
  const [row] = (await trx('operator_actions')
    .insert({
      action: record.action,
      account_id: principal.accountId === 0 ? null : principal.accountId,
      party_id: principal.partyId,
      registration_id: record.registrationId ?? null,
      webhook_id: record.webhookId ?? null,
      operation_id: record.operationId ?? null,
      filter: record.filter === undefined || record.filter === null ? null : JSON.stringify(record.filter),
      dry_run: record.dryRun ?? false,
      changed: record.changed === undefined ? null : record.changed,
      detail: JSON.stringify(record.detail ?? {}),
    })
    .returning('id')) as { id: number }[];
  return row!.id;
}
