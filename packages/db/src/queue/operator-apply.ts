import type { Knex } from 'knex';
import type { BulkWebhookAction, OperationSkipReason } from '@platform/shared';

/** What an operator action did to one webhook: changed it, or why it left it alone. */
export type OperatorOutcome =
  'changed' | Extract<OperationSkipReason, 'final' | 'not-failed' | 'registration-deleted'>;

export interface OperatorApply {
  action: BulkWebhookAction;
  ids: readonly number[];
  /** retry: start the 7-attempt schedule again (attempt count 0) instead of one more attempt. */
  freshSchedule?: boolean;
  /** The audit row (`operator_actions`) each changed webhook records as its last action. */
  actionId: number | null;
  now: Date;
  /** The shard group of the ids (docs/scaling.md, R2); absent: every bucket, the one database. */
  buckets?: readonly number[];
}

/** The one statement `applyOperatorAction` sends: a call of `webhooks_operator_apply` in `FROM` (Citus R1). */
export const OPERATOR_APPLY_SQL =
  'select webhook_id, outcome from webhooks_operator_apply(?, ?::bigint[], ?, ?, ?, p_buckets => ?::int[])';

/**
 * Applies an operator action (abort, resolve, retry) to webhooks, in the caller's transaction:
 * one call of `webhooks_operator_apply` (`functions/webhooks-operator-apply.ts`), the one home
 * of the operator actions' state rules (docs/webhooks.md#the-state-machine), group release and
 * re-entry, and the breaker's half-open on retry. The
 * single-webhook routes and every batch of a bulk operation use it alike. Answers the outcome per
 * id; ids that do not exist are absent.
 */
export async function applyOperatorAction(
  trx: Knex.Transaction,
  apply: OperatorApply,
): Promise<Map<number, OperatorOutcome>> {
  const { rows } = await trx.raw<{ rows: { webhook_id: string; outcome: OperatorOutcome }[] }>(
    OPERATOR_APPLY_SQL,
    [
      apply.action,
      [...apply.ids],
      apply.freshSchedule ?? false,
      apply.actionId,
      apply.now,
      apply.buckets ? [...apply.buckets] : null,
    ],
  );
  return new Map(rows.map((row) => [Number(row.webhook_id), row.outcome]));
}
