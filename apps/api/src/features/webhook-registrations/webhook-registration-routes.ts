import {
  PaginatedListOfWebhookRegistrationRead,
  PartyType,
  RotateSecretRequest,
  RotateSecretResult,
  WebhookRegistrationCreated,
  WebhookRegistrationHealth,
  WebhookRegistrationPatch,
  WebhookRegistrationRead,
  WebhookRegistrationWrite,
  WebhookTestRequest,
  WebhookTestResult,
  type PermissionName,
} from '@platform/shared';
import { z } from 'zod';
import { listQuery, searchBody } from '../../http/collection';
import { PageQuery } from '../../http/pagination';
import { defineRoute, type RouteDefinition } from '../../http/route';
import { pathId } from '../../http/validate';
import { readRegistrationHealth } from './webhook-registration-health';
import { rotateSigningSecret } from './webhook-registration-secret';
import {
  createRegistration,
  deleteRegistration,
  listRegistrations,
  readRegistration,
  REGISTRATION_COLLECTION,
  searchRegistrations,
  setDeliveryStatus,
  updateRegistration,
} from './webhook-registration-service';
import { sendTestEvent } from './webhook-registration-test-event';

/** Only Property Management Companies use webhooks, and Admin for any party (docs/webhooks.md#who-may-call-them). */
const webhookUsers = (permission: PermissionName) => ({
  allow: [PartyType.Admin, PartyType.PropertyManagementCompany],
  permission,
});
const tags = ['WebhookRegistration'];
const idParams = z.strictObject({ id: pathId });
const scopeNote = 'Admin sees every registration; a Property Management Company its own.';

export const webhookRegistrationRoutes: RouteDefinition[] = [
  defineRoute({
    method: 'post',
    path: '/api/webhook-registrations',
    summary: 'Register a webhook target',
    description:
      'Subscribes `targetUrl` to the listed (entityName, type) events of the party’s changes. ' +
      'Unsupported entities and relation event types are refused with the supported ones listed. ' +
      'Credentials are stored encrypted and never returned; `signingSecret` is returned only here. ' +
      'The target is not contacted.',
    tags,
    auth: webhookUsers('WebhookRegistration.Create'),
    body: WebhookRegistrationWrite,
    response: {
      description: 'The registration, with its signing secret',
      schema: WebhookRegistrationCreated,
    },
    handler: ({ deps, principal, body }) => createRegistration(deps, principal, body),
  }),
  defineRoute({
    method: 'get',
    path: '/api/webhook-registrations',
    summary: 'List webhook registrations',
    description: scopeNote,
    tags,
    auth: webhookUsers('WebhookRegistration.Read'),
    query: listQuery(REGISTRATION_COLLECTION),
    response: { description: 'A page of registrations', schema: PaginatedListOfWebhookRegistrationRead },
    textual: true,
    handler: ({ deps, principal, query }) => listRegistrations(deps, principal, query),
  }),
  defineRoute({
    method: 'post',
    path: '/api/webhook-registrations/search',
    summary: 'Search webhook registrations (by targetUrl, partyId, shouldGroup, created, …)',
    description: scopeNote,
    tags,
    auth: webhookUsers('WebhookRegistration.Read'),
    query: PageQuery,
    body: searchBody(REGISTRATION_COLLECTION),
    response: { description: 'A page of registrations', schema: PaginatedListOfWebhookRegistrationRead },
    textual: true,
    handler: ({ deps, principal, query, body }) => searchRegistrations(deps, principal, query, body),
  }),
  defineRoute({
    method: 'get',
    path: '/api/webhook-registrations/:id',
    summary: 'Read one webhook registration',
    description: 'Credentials and the signing secret are never returned.',
    tags,
    auth: webhookUsers('WebhookRegistration.Read'),
    params: idParams,
    response: { description: 'The registration', schema: WebhookRegistrationRead },
    textual: true,
    errors: [404],
    handler: ({ deps, principal, params }) => readRegistration(deps, principal, params.id),
  }),
  defineRoute({
    method: 'get',
    path: '/api/webhook-registrations/:id/health',
    summary: 'Delivery health of a webhook registration',
    description:
      'Its status, its target’s circuit breaker, attempts, success rate and latency (p50, p95) of the ' +
      'last hour and day, and its awaiting webhooks, from one snapshot. The figures come from ' +
      'per-minute counters, never the attempts themselves, so polling it stays cheap however many ' +
      'attempts are stored. Latencies are the upper bound of a 10 %-wide bucket.',
    tags,
    auth: webhookUsers('Webhook.Read'),
    params: idParams,
    response: { description: 'The health figures', schema: WebhookRegistrationHealth },
    errors: [404],
    handler: ({ deps, principal, params }) => readRegistrationHealth(deps, principal, params.id),
  }),
  defineRoute({
    method: 'patch',
    path: '/api/webhook-registrations/:id',
    summary: 'Change the target URL or the rate limit of a webhook registration',
    description:
      'Only `targetUrl` and `rateLimit` (null clears it) can change. Events, authorization and grouping cannot: ' +
      'create a new registration and delete the old one.',
    tags,
    auth: webhookUsers('WebhookRegistration.Update'),
    params: idParams,
    body: WebhookRegistrationPatch,
    response: { description: 'The registration', schema: WebhookRegistrationRead },
    errors: [404],
    handler: ({ deps, principal, params, body }) => updateRegistration(deps, principal, params.id, body),
  }),
  defineRoute({
    method: 'post',
    path: '/api/webhook-registrations/:id/pause',
    summary: 'Pause the deliveries of a webhook registration',
    description:
      'Status `paused`: its webhooks are still created (no change is lost), but none is claimed and no ' +
      'attempt is spent; deliveries already in flight finish. Pausing a disabled registration makes ' +
      'it paused and clears `disabledReason`; pausing a paused one changes nothing.',
    tags,
    auth: webhookUsers('Webhook.Update'),
    params: idParams,
    response: { description: 'The registration', schema: WebhookRegistrationRead },
    errors: [404],
    handler: ({ deps, principal, params }) => setDeliveryStatus(deps, principal, params.id, 'pause'),
  }),
  defineRoute({
    method: 'post',
    path: '/api/webhook-registrations/:id/resume',
    summary: 'Resume a paused or disabled webhook registration',
    description:
      'Status `active` again, `disabledReason` cleared, its failing run forgotten; the waiting webhooks ' +
      'are delivered, each group in order. The target’s circuit breaker half-opens at once (the ' +
      'operator says the endpoint is fixed), so the next delivery is its trial. Resuming an active ' +
      'registration keeps its status and half-opens an open breaker.',
    tags,
    auth: webhookUsers('Webhook.Update'),
    params: idParams,
    response: { description: 'The registration', schema: WebhookRegistrationRead },
    errors: [404],
    handler: ({ deps, principal, params }) => setDeliveryStatus(deps, principal, params.id, 'resume'),
  }),
  defineRoute({
    method: 'post',
    path: '/api/webhook-registrations/:id/test',
    summary: 'Send a test event to a webhook registration’s target now',
    description:
      'One delivery now, from the API, built and sent like every other: the usual delivery body for the ' +
      'chosen event (default: the first subscribed one) with the entity `{ "id": 0, "test": true }`, ' +
      'the registration’s authorization and Standard Webhooks signature, the same private-address ' +
      'refusal, timeout (`WEBHOOK_TIMEOUT`) and redacted 4 KiB excerpt, plus the header ' +
      '`x-webhook-test: 1` and a `webhook-id` of its own (`test_…`). A target that fails is still a ' +
      '200, with `errorKind` as an attempt would record it (`private-address` for a refused target). ' +
      'No webhook or attempt is written and the target’s circuit breaker is left alone (a test is no ' +
      'retry); paused and disabled registrations can be tested. Audited as `registration.test`. ' +
      'An event the registration does not subscribe to is a 400 naming the subscribed ones.',
    tags,
    auth: webhookUsers('Webhook.Update'),
    params: idParams,
    body: WebhookTestRequest,
    optionalBody: true,
    response: { description: 'How the target answered', schema: WebhookTestResult },
    errors: [404],
    handler: ({ deps, principal, params, body }) => sendTestEvent(deps, principal, params.id, body),
  }),
  defineRoute({
    method: 'post',
    path: '/api/webhook-registrations/:id/rotate-secret',
    summary: 'Rotate the signing secret of a webhook registration',
    description:
      'A new signing secret (`whsec_…`), answered only here. The previous one stays valid for ' +
      '`overlap` (default `24h`, at most `7d`; `0m`: none): until `previousSecretExpiresAt` every ' +
      'delivery carries both signatures, `webhook-signature: v1,<new> v1,<old>`, then only the new ' +
      'one. Only one previous secret is kept: rotating again during an overlap ends it. Audited as ' +
      '`registration.rotate-secret` (never with a secret).',
    tags,
    auth: webhookUsers('Webhook.Update'),
    params: idParams,
    body: RotateSecretRequest,
    optionalBody: true,
    response: { description: 'The new secret and the end of the overlap', schema: RotateSecretResult },
    errors: [404],
    handler: ({ deps, principal, params, body }) => rotateSigningSecret(deps, principal, params.id, body),
  }),
  defineRoute({
    method: 'delete',
    path: '/api/webhook-registrations/:id',
    summary: 'Delete a webhook registration',
    description:
      'Soft delete of the registration and its events; its undelivered webhooks (Created, Retrying, ' +
      'Failed, Pending) become Aborted in the same transaction.',
    tags,
    auth: webhookUsers('WebhookRegistration.Delete'),
    params: idParams,
    status: 204,
    errors: [404],
    handler: ({ deps, principal, params }) => deleteRegistration(deps, principal, params.id),
  }),
];
