import {
  OPERATOR_ACTION_NAMES,
  type OperatorActionName,
  type OperatorActionRead,
  type Page,
} from '@platform/shared';
import type { Knex } from '@platform/db';
import { z } from 'zod';
import type { Principal } from '../../auth/principal';
import { paginate, PageQuery } from '../../http/pagination';
import { scopeToParties, scopeToRegistrations, seesAllParties } from '../../http/scope';
import { wholeNumberText } from '../../http/validate';
import { presentOperatorAction, type OperatorActionRow } from './operator-action-presenter';

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
      // an action through an endpoint portal names its session: no account took it
      detail: JSON.stringify(
        principal.portal
          ? { ...record.detail, portalSessionId: principal.portal.sessionId }
          : (record.detail ?? {}),
      ),
    })
    .returning('id')) as { id: number }[];
  return row!.id;
}

/** GET /api/operator-actions: paging plus optional filters by who, what and which registration. */
export const OperatorActionQuery = PageQuery.extend({
  accountId: wholeNumberText('accountId', 1, 2147483647)
    .optional()
    .meta({ description: 'The acting account.' }),
  action: z
    .enum(OPERATOR_ACTION_NAMES, { error: `action must be one of ${OPERATOR_ACTION_NAMES.join(', ')}` })
    .optional(),
  registrationId: wholeNumberText('registrationId', 1, 2147483647).optional(),
});
export type OperatorActionQuery = z.infer<typeof OperatorActionQuery>;

/**
 * The audit rows the caller may see, as `operator_actions as o` (joined to its registration, `r`).
 * Admin sees every action. Any other party sees the actions its own accounts took (the acting
 * party, `party_id`, through `scopeToParties`) and the actions anyone took on the registrations of
 * its scope: a Property Management Company learns that platform support replayed its registration,
 * as the webhook's own read (`lastAction`) already tells it who aborted a webhook. The audit trail
 * and the operations it records (`GET /api/webhook-operations/{id}`) share this scope.
 */
export function visibleOperatorActions(knex: Knex, principal: Principal): Knex.QueryBuilder {
  const query = knex('operator_actions as o').leftJoin(
    'webhook_registrations as r',
    'r.id',
    'o.registration_id',
  );
  if (seesAllParties(principal)) return query;
  // a portal session sees only what was done to its own registrations (a recover it started)
  if (principal.portal) return scopeToRegistrations(query, 'r', principal);
  return query.where((visible) =>
    visible
      .where((acting) => scopeToParties(acting, 'o.party_id', principal))
      .orWhere((owning) => scopeToParties(owning, 'r.party_id', principal)),
  );
}

/**
 * A subquery of the email of the account that took the operator action whose id is in
 * `actionIdColumn`, where the acting party is in the caller's scope (its own accounts, a managed
 * party's); null otherwise: another party's people, platform support included, stay an account
 * id. The one rule for the audit trail's `accountEmail` and a webhook's `lastAction.accountEmail`.
 */
export function actorEmailOf(knex: Knex, principal: Principal, actionIdColumn: string): Knex.QueryBuilder {
  return scopeToParties(
    knex('operator_actions as ao')
      .join('accounts as aa', 'aa.id', 'ao.account_id')
      .select('aa.email')
      .where('ao.id', knex.ref(actionIdColumn)),
    'ao.party_id',
    principal,
  );
}

/** A page of the audit trail the caller may see (`visibleOperatorActions`), newest first. */
export function listOperatorActions(
  knex: Knex,
  principal: Principal,
  list: OperatorActionQuery,
): Promise<Page<OperatorActionRead>> {
  const query = visibleOperatorActions(knex, principal)
    .select('o.*', actorEmailOf(knex, principal, 'o.id').as('account_email'))
    // newest first; ids break ties between actions of one transaction (operator_actions_created)
    .orderBy([
      { column: 'o.created', order: 'desc' },
      { column: 'o.id', order: 'desc' },
    ]);
  if (list.accountId !== undefined) query.where('o.account_id', list.accountId);
  if (list.action !== undefined) query.where('o.action', list.action);
  if (list.registrationId !== undefined) query.where('o.registration_id', list.registrationId);
  return paginate(query, list, (row: OperatorActionRow) => presentOperatorAction(row));
}
