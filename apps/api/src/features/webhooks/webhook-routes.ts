import {
  PaginatedListOfWebhookAttemptRead,
  PaginatedListOfWebhookRead,
  PartyType,
  WebhookAttemptDetailRead,
  WebhookDetailRead,
  WebhookRead,
  type BulkWebhookAction,
  type PermissionName,
} from '@platform/shared';
import { z } from 'zod';
import { searchBody } from '../../http/collection';
import { PageQuery } from '../../http/pagination';
import { defineRoute, type RouteDefinition } from '../../http/route';
import { actOnWebhook, resendWebhookOf } from './webhook-actions';
import {
  listAttempts,
  listWebhooks,
  readAttempt,
  readWebhook,
  searchWebhooks,
  WEBHOOK_COLLECTION,
  webhookId,
  WebhookListQuery,
} from './webhook-service';

/** Operators of Property Management Companies, and Admin for every party (docs/webhooks.md#who-may-call-them). */
const operators = (permission: PermissionName) => ({
  allow: [PartyType.Admin, PartyType.PropertyManagementCompany],
  permission,
});
const tags = ['Webhook'];
const idParams = z.strictObject({ id: webhookId });
const scopeNote = 'Webhooks of the registrations of the caller’s party (Admin: all).';
const NOT_FINAL =
  'For a webhook that is not final (Created, Retrying, Failed, Pending). When it holds its group, ' +
  'the next webhook of the group becomes due. A final webhook is a 409.';

/** `POST /api/webhooks/:id/<action>`: one operator action on one webhook, answering the webhook. */
const webhookAction = (
  action: BulkWebhookAction,
  text: { summary: string; description: string; response: string },
) =>
  defineRoute({
    method: 'post',
    path: `/api/webhooks/:id/${action}`,
    summary: text.summary,
    description: text.description,
    tags,
    auth: operators('Webhook.Update'),
    params: idParams,
    response: { description: text.response, schema: WebhookRead },
    errors: [404, 409],
    handler: ({ deps, principal, params }) => actOnWebhook(deps, principal, params.id, action),
  });

export const webhookRoutes: RouteDefinition[] = [
  defineRoute({
    method: 'get',
    path: '/api/webhooks',
    summary: 'List webhooks, filtered by state, registration, entity and creation time',
    description: scopeNote,
    tags,
    auth: operators('Webhook.Read'),
    query: WebhookListQuery,
    response: { description: 'A page of webhooks', schema: PaginatedListOfWebhookRead },
    textual: true,
    handler: ({ deps, principal, query }) => listWebhooks(deps, principal, query),
  }),
  defineRoute({
    method: 'post',
    path: '/api/webhooks/search',
    summary: 'Search webhooks',
    description: scopeNote,
    tags,
    auth: operators('Webhook.Read'),
    query: PageQuery,
    body: searchBody(WEBHOOK_COLLECTION),
    response: { description: 'A page of webhooks', schema: PaginatedListOfWebhookRead },
    textual: true,
    handler: ({ deps, principal, query, body }) => searchWebhooks(deps, principal, query, body),
  }),
  defineRoute({
    method: 'get',
    path: '/api/webhooks/:id',
    summary: 'Read one webhook with the body it delivers',
    description: scopeNote,
    tags,
    auth: operators('Webhook.Read'),
    params: idParams,
    response: { description: 'The webhook and its payload', schema: WebhookDetailRead },
    textual: true,
    errors: [404],
    handler: ({ deps, principal, params }) => readWebhook(deps, principal, params.id),
  }),
  defineRoute({
    method: 'get',
    path: '/api/webhooks/:id/attempts',
    summary: 'List the delivery attempts of a webhook, newest first',
    tags,
    auth: operators('Webhook.Read'),
    params: idParams,
    query: PageQuery,
    response: { description: 'A page of attempts', schema: PaginatedListOfWebhookAttemptRead },
    textual: true,
    errors: [404],
    handler: ({ deps, principal, params, query }) => listAttempts(deps, principal, params.id, query),
  }),
  defineRoute({
    method: 'get',
    path: '/api/webhooks/:id/attempts/:attemptId',
    summary: 'Read one attempt in full: the request as sent and the answer',
    description:
      'The request’s URL, headers and body as sent (credentials as [redacted]; the body is the ' +
      'webhook’s own, rebuilt from its recorded change), the answer’s status, headers (at most 2 KiB) ' +
      'and body (the first 4 KiB), the duration, and for an attempt that sent nothing why it was skipped.',
    tags,
    auth: operators('Webhook.Read'),
    params: z.strictObject({ id: webhookId, attemptId: webhookId }),
    response: { description: 'The attempt', schema: WebhookAttemptDetailRead },
    textual: true,
    errors: [404],
    handler: ({ deps, principal, params }) => readAttempt(deps, principal, params.id, params.attemptId),
  }),
  webhookAction('abort', {
    summary: 'Abort a webhook: it is never delivered or retried',
    description: NOT_FINAL,
    response: 'The webhook, now Aborted',
  }),
  webhookAction('resolve', {
    summary: 'Mark a webhook resolved: the issue was handled by hand',
    description: NOT_FINAL,
    response: 'The webhook, now Resolved',
  }),
  webhookAction('retry', {
    summary: 'Give a Failed webhook one more attempt',
    description:
      'A Failed webhook becomes Retrying, due now, keeping its attempt count. Of a continue-after-fail ' +
      'registration it re-enters its group (Pending while another webhook of the group is open). ' +
      'An open circuit breaker of its target half-opens at once: the next delivery is the trial. ' +
      'Any other state is a 409.',
    response: 'The webhook',
  }),
  defineRoute({
    method: 'post',
    path: '/api/webhooks/:id/resend',
    summary: 'Resend a Successful webhook: a new webhook with the same body',
    description:
      'A new webhook of the same registration referencing the same recorded change, so the receiver ' +
      'gets the same body again, recorded in the audit trail as webhook.resend (its detail names the ' +
      'new webhook). In a grouped registration it enters the group at its tail, like any new webhook, ' +
      'and only the group’s latest webhook can be resent: an older one would deliver a stale state ' +
      'after a newer one. A webhook that is not Successful, a superseded one, or one whose ' +
      'registration was deleted or no longer subscribes to its event is a 409.',
    tags,
    auth: operators('Webhook.Update'),
    params: idParams,
    status: 201,
    response: { description: 'The new webhook', schema: WebhookRead },
    errors: [404, 409],
    handler: ({ deps, principal, params }) => resendWebhookOf(deps, principal, params.id),
  }),
];
