import { randomUUID } from 'node:crypto';
import {
  PORTAL_ACTIONS,
  PortalTheme,
  portalSessionLifetime,
  type PortalAction,
  type WebhookPortalSessionCreated,
  type WebhookPortalSessionRead,
  type WebhookPortalSessionWrite,
} from '@platform/shared';
import type { AppDeps } from '../../deps';
import type { Principal } from '../../auth/principal';
import { AppError, fieldError } from '../../http/errors';
import { requireVisibleParty, scopeToParties } from '../../http/scope';
import { recordOperatorAction } from '../operator-actions/operator-action-service';

/** The path of a session's portal page; its token follows in the fragment, never sent to a server. */
export const portalPagePath = (sessionId: string): string => `/portal/${sessionId}`;

interface SessionRow {
  id: string;
  party_id: number;
  registration_ids: number[] | null;
  actions: string[];
  allowed_origins: string[];
  theme: unknown;
  expires_at: Date;
  created: Date;
  revoked_at: Date | null;
}

/** `read` plus the asked actions, once each, in the order of `PORTAL_ACTIONS`. */
function sessionActions(asked: readonly PortalAction[]): PortalAction[] {
  return PORTAL_ACTIONS.filter((action) => action === 'read' || asked.includes(action));
}

/** A 400 naming the ids of `registrationIds` that are no live registration of party `partyId`. */
async function checkRegistrations(
  deps: AppDeps,
  partyId: number,
  registrationIds: readonly number[],
): Promise<void> {
  const live: { id: number }[] = await deps
    .knex('webhook_registrations')
    .whereIn('id', registrationIds)
    .where('party_id', partyId)
    .whereNull('deleted')
    .select('id');
  const found = new Set(live.map((row) => row.id));
  const missing = [...new Set(registrationIds)].filter((id) => !found.has(id));
  if (missing.length > 0) {
    throw fieldError(
      'registrationIds',
      `${missing.join(', ')} are no live registrations of party ${partyId}`,
    );
  }
}

/**
 * `POST /api/webhook-portal/sessions`: opens a portal session for a party of the caller's scope,
 * audited as `portal-session.create` in the same transaction, and signs its token.
 */
export async function createPortalSession(
  deps: AppDeps,
  principal: Principal,
  body: WebhookPortalSessionWrite,
  origin: string,
): Promise<WebhookPortalSessionCreated> {
  await requireVisibleParty(deps.knex, principal, body.partyId);
  const registrationIds = body.registrationIds
    ? [...new Set(body.registrationIds)].sort((a, b) => a - b)
    : null;
  if (registrationIds) await checkRegistrations(deps, body.partyId, registrationIds);
  const id = randomUUID();
  const expiresAt = new Date(deps.now().getTime() + portalSessionLifetime(body.expiresIn)!);
  const actions = sessionActions(body.actions);
  const allowedOrigins = [...new Set(body.allowedOrigins)];
  await deps.knex.transaction(async (trx) => {
    await trx('webhook_portal_sessions').insert({
      id,
      party_id: body.partyId,
      registration_ids: registrationIds,
      actions,
      allowed_origins: allowedOrigins,
      theme: JSON.stringify(body.theme ?? {}),
      expires_at: expiresAt,
      created: deps.now(),
      created_by_account_id: principal.accountId === 0 ? null : principal.accountId,
    });
    await recordOperatorAction(trx, principal, {
      action: 'portal-session.create',
      detail: {
        sessionId: id,
        partyId: body.partyId,
        registrationIds,
        actions,
        allowedOrigins,
        expiresAt: expiresAt.toISOString(),
      },
    });
  });
  const token = await deps.tokens.signPortalToken(id, body.partyId, expiresAt);
  return {
    id,
    url: `${origin}${portalPagePath(id)}#token=${token}`,
    token,
    expiresAt: expiresAt.toISOString(),
  };
}

/**
 * `DELETE /api/webhook-portal/sessions/{id}`: ends a session of a party of the caller's scope (404
 * otherwise); its token is refused from the next request on. Revoking a revoked or expired session
 * changes nothing and is not audited again.
 */
export async function revokePortalSession(deps: AppDeps, principal: Principal, id: string): Promise<void> {
  await deps.knex.transaction(async (trx) => {
    const session: { id: string; party_id: number; revoked_at: Date | null } | undefined =
      await scopeToParties(
        trx('webhook_portal_sessions as s').where('s.id', id).forUpdate(),
        's.party_id',
        principal,
      ).first('s.id', 's.party_id', 's.revoked_at');
    if (!session) throw new AppError('NotFound', `Portal session ${id} was not found`);
    if (session.revoked_at !== null) return;
    await trx('webhook_portal_sessions')
      .where({ id })
      .update({
        revoked_at: deps.now(),
        revoked_by_account_id: principal.accountId === 0 ? null : principal.accountId,
      });
    await recordOperatorAction(trx, principal, {
      action: 'portal-session.revoke',
      detail: { sessionId: id, partyId: session.party_id },
    });
  });
}

/** A session row as its read shape. */
function presentSession(row: SessionRow & { party_name: string }): WebhookPortalSessionRead {
  const theme = PortalTheme.safeParse(row.theme);
  return {
    id: row.id,
    partyId: row.party_id,
    partyName: row.party_name,
    registrationIds: row.registration_ids,
    actions: row.actions.filter((action): action is PortalAction =>
      (PORTAL_ACTIONS as readonly string[]).includes(action),
    ),
    allowedOrigins: row.allowed_origins,
    theme: theme.success ? theme.data : {},
    expiresAt: row.expires_at.toISOString(),
    created: row.created.toISOString(),
  };
}

/** `GET /api/webhook-portal/session`: the session of the calling portal token. */
export async function readOwnPortalSession(
  deps: AppDeps,
  principal: Principal,
): Promise<WebhookPortalSessionRead> {
  const row = await deps
    .knex('webhook_portal_sessions as s')
    .join('parties as p', 'p.id', 's.party_id')
    .where('s.id', principal.portal!.sessionId)
    .first('s.*', 'p.name as party_name');
  return presentSession(row);
}

/**
 * The origins that may frame the portal page of session `id` (its `allowedOrigins`; none for an
 * unknown id): the page server's `frame-ancestors`. An ended session keeps its origins, so its
 * page can still say, inside the platform's frame, that it ended.
 */
export async function portalFrameAncestors(deps: AppDeps, id: string): Promise<string[]> {
  const row: Pick<SessionRow, 'allowed_origins'> | undefined = await deps
    .knex('webhook_portal_sessions')
    .where({ id })
    .first('allowed_origins');
  return row?.allowed_origins ?? [];
}
