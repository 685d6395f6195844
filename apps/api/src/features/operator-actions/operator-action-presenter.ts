import type { OperatorActionName, OperatorActionRead } from '@platform/shared';

/** What a row of the audit trail (`operator_actions`) reads as. */
export interface OperatorActionRow {
  id: number;
  action: OperatorActionName;
  account_id: number | null;
  /** Selected by the list where the caller may see it (`listOperatorActions`). */
  account_email?: string | null;
  party_id: number;
  registration_id: number | null;
  webhook_id: number | null;
  operation_id: number | null;
  filter: Record<string, unknown> | null;
  dry_run: boolean;
  changed: number | null;
  detail: Record<string, unknown>;
  created: Date;
}

/** The OperatorActionRead shape of an audit row. */
export function presentOperatorAction(row: OperatorActionRow): OperatorActionRead {
  return {
    id: row.id,
    action: row.action,
    accountId: row.account_id,
    accountEmail: row.account_email ?? null,
    partyId: row.party_id,
    registrationId: row.registration_id,
    webhookId: row.webhook_id,
    operationId: row.operation_id,
    filter: row.filter,
    dryRun: row.dry_run,
    changed: row.changed,
    detail: row.detail,
    created: row.created.toISOString(),
  };
}
