import type {
  OperatorActionName,
  WebhookBulkRequest,
  WebhookOperationRead,
  WebhookWindowRequest,
} from '@platform/shared';
import type { Principal } from '../../auth/principal';
import type { AppDeps } from '../../deps';
import { AppError } from '../../http/errors';
import { scopeToRegistrations } from '../../http/scope';
import { visibleOperatorActions } from '../operator-actions/operator-action-service';
import { visibleRegistrations } from '../webhook-registrations/webhook-registration-service';
import { createOperation, type NewOperation } from './operation-runner';
import type { OperationRow } from './operation-kinds';

/** The WebhookOperationRead shape of an operation row. */
export function presentOperation(row: OperationRow): WebhookOperationRead {
  return {
    id: row.id,
    action: row.action,
    state: row.state,
    dryRun: row.dry_run,
    freshSchedule: row.fresh_schedule,
    registrationId: row.registration_id,
    filter: row.filter,
    total: row.total,
    done: row.done,
    changed: row.changed,
    skipped: row.skipped as Record<string, number>,
    error: row.error,
    startedAt: row.started_at.toISOString(),
    finishedAt: row.finished_at?.toISOString() ?? null,
    requestedByAccountId: row.requested_by_account_id,
  };
}

/** 404 unless the caller may see the live registration `id`. */
export async function checkRegistration(deps: AppDeps, principal: Principal, id: number): Promise<void> {
  const found = await visibleRegistrations(deps.knex, principal).where('r.id', id).first('r.id');
  if (!found) throw new AppError('NotFound', `Webhook registration ${id} was not found`);
}

/** Creates an operation with its items and audit row in one transaction, then starts it. */
export async function startOperation(
  deps: AppDeps,
  principal: Principal,
  request: NewOperation,
): Promise<WebhookOperationRead> {
  const operation = await deps.knex.transaction((trx) =>
    createOperation(trx, deps.operations, principal, request),
  );
  deps.operations.kick(operation.id);
  return presentOperation(operation);
}

/**
 * `POST /api/webhooks/bulk`: retry, abort or resolve every visible webhook matching the filter, as
 * an operation. A filter naming a registration the caller cannot see is a 404 (rather than an
 * operation that selects nothing).
 */
export async function startBulk(
  deps: AppDeps,
  principal: Principal,
  request: WebhookBulkRequest,
): Promise<WebhookOperationRead> {
  if (request.filter.registrationId !== undefined) {
    const found = await scopeToRegistrations(
      deps.knex('webhook_registrations as r').where('r.id', request.filter.registrationId),
      'r',
      principal,
    ).first('r.id');
    if (!found)
      throw new AppError('NotFound', `Webhook registration ${request.filter.registrationId} was not found`);
  }
  return startOperation(deps, principal, {
    action: request.action,
    registrationId: request.filter.registrationId ?? null,
    filter: request.filter,
    dryRun: request.dryRun ?? false,
    freshSchedule: request.freshSchedule ?? false,
    fromDryRun: request.fromDryRun,
    audit: `webhooks.bulk-${request.action}` satisfies OperatorActionName,
  });
}

/**
 * `POST /api/webhook-registrations/{id}/recover` and `/replay`, on the window [since, until) of a
 * registration the caller may see (404 otherwise):
 * - recover: every Failed webhook of the registration created in the window goes back to delivery
 *   with a fresh schedule, each group in its order (`recoverKind`).
 * - replay: new webhooks for the recorded changes of the window the registration would receive
 *   (`replayKind`). A replay is not idempotent, so one runs at a time per registration: a second
 *   is a 409.
 */
export async function startWindowOperation(
  deps: AppDeps,
  principal: Principal,
  action: 'recover' | 'replay',
  registrationId: number,
  window: WebhookWindowRequest,
): Promise<WebhookOperationRead> {
  await checkRegistration(deps, principal, registrationId);
  if (action === 'replay' && !window.dryRun) {
    // the unique index webhook_operations_one_replay closes the race this check leaves open
    const running = await deps
      .knex('webhook_operations')
      .where({ registration_id: registrationId, action, state: 'running', dry_run: false })
      .first('id');
    if (running) {
      throw new AppError(
        'Conflict',
        `A replay of webhook registration ${registrationId} is running (operation ${running.id}); ` +
          'a second one would deliver its window twice. Wait for it to finish.',
      );
    }
  }
  return startOperation(deps, principal, {
    action,
    registrationId,
    filter: { since: window.since, ...(window.until === undefined ? {} : { until: window.until }) },
    dryRun: window.dryRun ?? false,
    freshSchedule: action === 'recover',
    fromDryRun: window.fromDryRun,
    audit: `registration.${action}`,
  });
}

/**
 * `GET /api/webhook-operations/{id}`: an operation whose audit row the caller may see (started by
 * its party, or on a registration of its scope; Admin: all), so every operation the audit trail
 * links to can be opened.
 */
export async function readOperation(
  deps: AppDeps,
  principal: Principal,
  id: number,
): Promise<WebhookOperationRead> {
  const row = (await visibleOperatorActions(deps.knex, principal)
    .join('webhook_operations as op', 'op.audit_id', 'o.id')
    .where('op.id', id)
    .first('op.*')) as OperationRow | undefined;
  if (!row) throw new AppError('NotFound', `Webhook operation ${id} was not found`);
  return presentOperation(row);
}
