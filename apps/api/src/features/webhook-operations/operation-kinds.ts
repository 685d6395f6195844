import type { OperationSkipReason, WebhookOperationAction } from '@platform/shared';
import type { Knex } from '@platform/db';
import type { Principal } from '../../auth/principal';

/** A row of `webhook_operations`, as the runner and the kinds read it. */
export interface OperationRow {
  id: number;
  action: WebhookOperationAction;
  state: 'running' | 'done' | 'failed';
  dry_run: boolean;
  fresh_schedule: boolean;
  registration_id: number | null;
  /** The registration's tenant bucket (with `registration_id`), read when the operation was asked. */
  bucket: number | null;
  /** The bulk filter, or the window `{ since, until }` of a recover or a replay. */
  filter: Record<string, unknown>;
  requested_by_account_id: number | null;
  audit_id: number | null;
  total: number;
  done: number;
  changed: number;
  skipped: Partial<Record<OperationSkipReason, number>>;
  cursor: number;
  error: string | null;
  started_at: Date;
  finished_at: Date | null;
}

/** What one batch did: how many items it changed, and why it left the others alone. */
export interface BatchResult {
  changed: number;
  skipped: Partial<Record<OperationSkipReason, number>>;
}

/**
 * What an operation does, per action. The runner (`operation-runner.ts`) owns everything else:
 * batches, their transactions, the cursor, the lease, dry runs (a batch applied inside a savepoint
 * that is rolled back), resuming after a restart, and the audit row's final count.
 */
export interface OperationKind {
  /**
   * Fills `webhook_operation_items` with the ids the operation acts on (webhook ids; entity change
   * ids for a replay) within the caller's scope, in the transaction that creates it, so what it
   * selected is fixed when it is answered. Returns how many.
   */
  select(trx: Knex.Transaction, operation: OperationRow, principal: Principal): Promise<number>;
  /** Applies one batch of item ids (ascending) in `trx`. */
  apply(trx: Knex.Transaction, operation: OperationRow, itemIds: number[], now: Date): Promise<BatchResult>;
}
