import {
  ALL_PARTY_TYPES,
  PartyType,
  TokenScope,
  WebhookPortalSessionCreated,
  WebhookPortalSessionRead,
  WebhookPortalSessionWrite,
} from '@platform/shared';
import { z } from 'zod';
import { defineRoute, type RouteDefinition } from '../../http/route';
import { createPortalSession, readOwnPortalSession, revokePortalSession } from './portal-session-service';

const tags = ['WebhookPortal'];
/** Who opens and ends portal sessions: whoever may act on the party's webhooks (docs/portal.md). */
const sessionOpeners = {
  allow: [PartyType.Admin, PartyType.PropertyManagementCompany],
  permission: 'Webhook.Update',
} as const;

export const portalSessionRoutes: RouteDefinition[] = [
  defineRoute({
    method: 'post',
    path: '/api/webhook-portal/sessions',
    summary: 'Open an endpoint-portal session for a party',
    description:
      'A short-lived session (`expiresIn`, at most `24h`) of the endpoint portal for one party of the ' +
      'caller’s scope (Admin: any party; a Property Management Company: its own and the parties it ' +
      'manages), limited to `registrationIds` when given, allowed `read` plus the listed `actions`. ' +
      'Answers the session’s bearer `token` and the portal page `url` (token in its fragment). The ' +
      'token may call only the webhook routes its actions allow, for that party’s data only; ' +
      'everything else refuses it. Audited as `portal-session.create`. See docs/portal.md.',
    tags,
    auth: sessionOpeners,
    body: WebhookPortalSessionWrite,
    status: 201,
    response: { description: 'The session, its token and its page', schema: WebhookPortalSessionCreated },
    errors: [404],
    handler: ({ deps, principal, body, ctx }) =>
      createPortalSession(deps, principal, body, `${ctx.protocol}://${ctx.host}`),
  }),
  defineRoute({
    method: 'delete',
    path: '/api/webhook-portal/sessions/:id',
    summary: 'Revoke an endpoint-portal session',
    description:
      'Its token is refused (401) from the next request on, and its page shows that the session ' +
      'ended. Revoking an ended session changes nothing. Audited as `portal-session.revoke`.',
    tags,
    auth: sessionOpeners,
    params: z.strictObject({ id: z.uuid({ error: 'id must be a session id (a UUID)' }) }),
    status: 204,
    errors: [404],
    handler: ({ deps, principal, params }) => revokePortalSession(deps, principal, params.id.toLowerCase()),
  }),
  defineRoute({
    method: 'get',
    path: '/api/webhook-portal/session',
    summary: 'The endpoint-portal session of the calling portal token',
    description:
      'Its party, registrations, actions and theme: what the portal page shows and offers. Only a ' +
      'portal token may call it.',
    tags,
    auth: { allow: ALL_PARTY_TYPES, scopes: [TokenScope.Portal] },
    response: { description: 'The session', schema: WebhookPortalSessionRead },
    handler: ({ deps, principal }) => readOwnPortalSession(deps, principal),
  }),
];
