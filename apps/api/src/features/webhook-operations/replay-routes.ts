import { PartyType, WebhookOperationRead, WebhookWindowRequest } from '@platform/shared';
import { z } from 'zod';
import { defineRoute, type RouteDefinition } from '../../http/route';
import { pathId } from '../../http/validate';
import { startReplay } from './replay-service';

export const replayRoutes: RouteDefinition[] = [
  defineRoute({
    method: 'post',
    path: '/api/webhook-registrations/:id/replay',
    summary: 'Deliver again every recorded change of a window, in order, as new webhooks',
    description:
      'For a consumer that lost its data: a new webhook for every entity change recorded in [since, ' +
      'until) that the registration would receive (its events, changes by its own party, spec 6.1), ' +
      'with the body as it was then, in the original order, grouped as the registration groups (a ' +
      'replayed change waits behind its group’s open webhooks). Changes are kept at least as long as ' +
      'WEBHOOK_RETENTION. Replaying twice delivers twice. `dryRun` counts what would be written. Runs ' +
      'as an operation.',
    tags: ['WebhookRegistration'],
    auth: { allow: [PartyType.Admin, PartyType.PropertyManagementCompany], permission: 'Webhook.Update' },
    params: z.strictObject({ id: pathId }),
    body: WebhookWindowRequest,
    status: 202,
    response: {
      description: 'The operation, running; poll `GET /api/webhook-operations/{id}`',
      schema: WebhookOperationRead,
    },
    errors: [404],
    handler: ({ deps, principal, params, body }) => startReplay(deps, principal, params.id, body),
  }),
];
