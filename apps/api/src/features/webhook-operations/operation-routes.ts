import {
  PartyType,
  WebhookBulkRequest,
  WebhookOperationRead,
  WebhookWindowRequest,
  type PermissionName,
} from '@platform/shared';
import { z } from 'zod';
import { defineRoute, type RouteDefinition } from '../../http/route';
import { pathId } from '../../http/validate';
import { webhookId } from '../webhooks/webhook-service';
import { readOperation, startBulk, startWindowOperation } from './operation-service';

/** Operators of Property Management Companies, and Admin for every party (docs/webhooks.md#who-may-call-them). */
const operators = (permission: PermissionName) => ({
  allow: [PartyType.Admin, PartyType.PropertyManagementCompany],
  permission,
});
const operationAnswer = {
  description: 'The operation, running; poll `GET /api/webhook-operations/{id}`',
  schema: WebhookOperationRead,
} as const;

export const operationRoutes: RouteDefinition[] = [
  defineRoute({
    method: 'post',
    path: '/api/webhooks/bulk',
    summary: 'Retry, abort or resolve every webhook matching a filter',
    description:
      'Selects the visible webhooks matching every field of `filter` when it is asked, then applies the ' +
      'action in batches, with the rules of the single-webhook actions (a retry takes Failed webhooks; ' +
      'abort and resolve any that is not final; a group’s head releases its group). Each batch is one ' +
      'transaction; an operation interrupted by a restart resumes. `dryRun` counts what would change and ' +
      'changes nothing. `freshSchedule` (retry) starts the 7-attempt schedule again. Running it twice is ' +
      'safe: the second finds nothing left to change.',
    tags: ['Webhook'],
    auth: operators('Webhook.Update'),
    body: WebhookBulkRequest,
    status: 202,
    response: operationAnswer,
    errors: [404, 409],
    handler: ({ deps, principal, body }) => startBulk(deps, principal, body),
  }),
  defineRoute({
    method: 'get',
    path: '/api/webhook-operations/:id',
    summary: 'Read a bulk operation, recover or replay: how far it got',
    description:
      'Operations started by the caller’s party, or on a registration of its scope, as the audit trail ' +
      'shows them (Admin: all).',
    tags: ['Webhook'],
    auth: operators('Webhook.Read'),
    params: z.strictObject({ id: webhookId }),
    response: { description: 'The operation', schema: WebhookOperationRead },
    errors: [404],
    handler: ({ deps, principal, params }) => readOperation(deps, principal, params.id),
  }),
  defineRoute({
    method: 'post',
    path: '/api/webhook-registrations/:id/recover',
    summary: 'Deliver again every Failed webhook of a window, each group in order',
    description:
      'Every Failed webhook of the registration created in [since, until) goes back to delivery with a ' +
      'fresh schedule (all 7 attempts again), each group in its original order, ahead of the group’s later ' +
      'webhooks. An open circuit breaker of the target half-opens at once. Runs as an operation.',
    tags: ['WebhookRegistration'],
    auth: operators('Webhook.Update'),
    params: z.strictObject({ id: pathId }),
    body: WebhookWindowRequest,
    status: 202,
    response: operationAnswer,
    errors: [404, 409],
    handler: ({ deps, principal, params, body }) =>
      startWindowOperation(deps, principal, 'recover', params.id, body),
  }),
  defineRoute({
    method: 'post',
    path: '/api/webhook-registrations/:id/replay',
    summary: 'Deliver again every recorded change of a window, in order, as new webhooks',
    description:
      'For a consumer that lost its data: a new webhook for every entity change recorded in [since, ' +
      'until) that the registration would receive (its events, changes made by accounts of its own party), ' +
      'with the body as it was then, in the original order, grouped as the registration groups (a ' +
      'replayed change waits behind its group’s open webhooks). Changes are kept at least as long as ' +
      'WEBHOOK_RETENTION. Replaying twice delivers twice; a replay while another of the registration ' +
      'runs is a 409. `dryRun` counts what would be written. Runs ' +
      'as an operation.',
    tags: ['WebhookRegistration'],
    auth: operators('Webhook.Update'),
    params: z.strictObject({ id: pathId }),
    body: WebhookWindowRequest,
    status: 202,
    response: operationAnswer,
    errors: [404, 409],
    handler: ({ deps, principal, params, body }) =>
      startWindowOperation(deps, principal, 'replay', params.id, body),
  }),
];
