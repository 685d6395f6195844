import { PORTAL_ACTIONS, TokenScope, type PartyType, type PortalAction } from '@platform/shared';
import type { AppDeps } from '../deps';
import { AppError, UnauthenticatedError } from '../http/errors';
import type { RouteDefinition } from '../http/route';
import type { Principal } from './principal';

/** What a portal token needs to call one route. */
export interface PortalRouteRule {
  action: PortalAction;
  /** Only a session over all of the party's registrations may call it (creating one, say). */
  wholeParty?: true;
}

/**
 * THE rule of which routes an endpoint-portal token may call, and with which action
 * (docs/portal.md#what-each-action-allows), keyed by the route's method and declared path. Every
 * route the router serves asks `authorizePortal`, which reads only this table: a route missing
 * here refuses portal tokens with a 403, whatever its own `auth` says. Which rows the allowed
 * routes then see is `scopeToRegistrations` (http/scope.ts): the session's party and
 * registrations only, anything else a 404.
 */
export const PORTAL_ROUTE_RULES: Readonly<Record<string, PortalRouteRule>> = {
  'GET /api/webhook-portal/session': { action: 'read' },
  'GET /api/webhook-event-types': { action: 'read' },
  'GET /api/webhook-registrations': { action: 'read' },
  'POST /api/webhook-registrations/search': { action: 'read' },
  'GET /api/webhook-registrations/:id': { action: 'read' },
  'GET /api/webhook-registrations/:id/health': { action: 'read' },
  'GET /api/webhooks': { action: 'read' },
  'POST /api/webhooks/search': { action: 'read' },
  'GET /api/webhooks/:id': { action: 'read' },
  'GET /api/webhooks/:id/attempts': { action: 'read' },
  'GET /api/webhook-operations/:id': { action: 'read' },
  'POST /api/webhook-registrations/:id/test': { action: 'test' },
  'POST /api/webhooks/:id/retry': { action: 'retry' },
  'POST /api/webhook-registrations/:id/recover': { action: 'recover' },
  'POST /api/webhook-registrations/:id/rotate-secret': { action: 'rotate-secret' },
  'POST /api/webhook-registrations': { action: 'manage', wholeParty: true },
  'PATCH /api/webhook-registrations/:id': { action: 'manage' },
  'POST /api/webhook-registrations/:id/pause': { action: 'manage' },
  'POST /api/webhook-registrations/:id/resume': { action: 'manage' },
};

/** The key of `route` in `PORTAL_ROUTE_RULES`. */
export const portalRouteKey = (route: Pick<RouteDefinition, 'method' | 'path'>): string =>
  `${route.method.toUpperCase()} ${route.path}`;

/**
 * Refuses a portal principal a route with a 403 saying why: the route is not one the portal
 * calls, the session lacks the route's action, or the route needs a session over the whole party.
 */
export function authorizePortal(principal: Principal, route: Pick<RouteDefinition, 'method' | 'path'>): void {
  const portal = principal.portal!;
  const rule = PORTAL_ROUTE_RULES[portalRouteKey(route)];
  if (!rule) throw new AppError('Forbidden', 'A portal session token cannot call this operation');
  if (!portal.actions.has(rule.action)) {
    throw new AppError('Forbidden', `This portal session does not allow the action "${rule.action}"`);
  }
  if (rule.wholeParty && portal.registrationIds !== null) {
    throw new AppError(
      'Forbidden',
      'This portal session is limited to some registrations, so it cannot create registrations',
    );
  }
}

interface SessionRow {
  id: string;
  party_id: number;
  registration_ids: number[] | null;
  actions: string[];
  expires_at: Date;
  revoked_at: Date | null;
  party_name: string;
  party_type: number;
}

/**
 * The principal of a verified portal token, from its session's row (one primary-key read, so a
 * revoked session ends at once): 401 when the session is revoked, expired, or its party is gone.
 * It acts for no account and holds no permission: its actions are its rights.
 */
export async function portalPrincipal(
  deps: AppDeps,
  claims: { sessionId: string; partyId: number },
): Promise<Principal> {
  const row: SessionRow | undefined = await deps
    .knex('webhook_portal_sessions as s')
    .join('parties as p', 'p.id', 's.party_id')
    .where({ 's.id': claims.sessionId, 's.party_id': claims.partyId })
    .whereNull('p.deleted')
    .first('s.*', 'p.name as party_name', 'p.type as party_type');
  if (!row) throw new UnauthenticatedError('portal session unknown');
  if (row.revoked_at !== null) throw new UnauthenticatedError('portal session revoked');
  if (row.expires_at.getTime() <= deps.now().getTime())
    throw new UnauthenticatedError('portal session expired');
  const actions = new Set(
    row.actions.filter((action): action is PortalAction =>
      (PORTAL_ACTIONS as readonly string[]).includes(action),
    ),
  );
  return {
    accountId: 0,
    partyId: row.party_id,
    partyName: row.party_name,
    partyType: row.party_type as PartyType,
    email: '',
    scope: TokenScope.Portal,
    permissions: new Set(),
    portal: { sessionId: row.id, actions, registrationIds: row.registration_ids },
  };
}
