import {
  WebhookState,
  type OperatorActionRead,
  type WebhookPortalSessionCreated,
  type WebhookPortalSessionRead,
  type WebhookRegistrationRead,
} from '@platform/shared';
import { loadSigningKey } from '@platform/crypto';
import { setWebhookState, startTestTarget, type TestTarget } from '@platform/testkit';
import { SignJWT } from 'jose';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  expectAccessRules,
  testPrivateKeyPem,
  useTestApi,
  type WorldParty,
} from '../../../tests/support/api';
import { expectProblem, expectUnauthenticated, readJson } from '../../../tests/support/http';
import { createProperty, register, webhooksOf } from '../../../tests/support/webhooks';
import { PORTAL_ROUTE_RULES } from '../../auth/portal-access';
import { ROUTES } from '../../routes';

const { api, world } = useTestApi({ world: true, truncateWebhooks: true });

let target: TestTarget;
beforeAll(async () => {
  target = await startTestTarget(() => ({ status: 204 }));
});
afterAll(async () => {
  await target.close();
});

/** A 400 ProblemDetails with exactly these field errors. */
const expectBadFields = (response: Response, errors: Record<string, string[]>) =>
  expectProblem(response, 400, { errors });

function postSession(token: string, body: Record<string, unknown>): Promise<Response> {
  return api.fetch('/api/webhook-portal/sessions', { method: 'POST', token, json: body });
}

/** Opens a portal session as `opener` for its own party (or `body.partyId`) and answers it. */
async function openSession(
  opener: WorldParty,
  body: Record<string, unknown> = {},
): Promise<WebhookPortalSessionCreated> {
  const response = await postSession(opener.full.token, {
    partyId: opener.id,
    actions: [],
    expiresIn: '1h',
    allowedOrigins: ['https://app.example.com'],
    ...body,
  });
  return readJson<WebhookPortalSessionCreated>(response, 201);
}

const auditOf = async (action: string, token = world.admin.full.token) =>
  (
    await readJson<{ items: OperatorActionRead[] }>(
      await api.fetch(`/api/operator-actions?action=${action}`, { token }),
    )
  ).items;

/** Two registrations of the PMC (to a local target), one of the other PMC, a webhook each. */
async function fixture() {
  const targetUrl = target.url;
  const [mine, alsoMine, foreign] = [
    await register(api, world.pmc.full.token, { targetUrl }),
    await register(api, world.pmc.full.token, { targetUrl }),
    await register(api, world.otherPmc.full.token, { targetUrl }),
  ];
  await createProperty(api, world.pmc.full.token);
  await createProperty(api, world.otherPmc.full.token);
  const [hook] = await webhooksOf(api, mine.id);
  const [alsoHook] = await webhooksOf(api, alsoMine.id);
  const [foreignHook] = await webhooksOf(api, foreign.id);
  return { mine, alsoMine, foreign, hook: hook!.id, alsoHook: alsoHook!.id, foreignHook: foreignHook!.id };
}

describe('POST /api/webhook-portal/sessions', () => {
  it('opens a session: its token, its page with the token in the fragment, its row and its audit entry', async () => {
    const { mine } = await fixture();
    const before = api.clock.now();
    const session = await openSession(world.pmc, {
      registrationIds: [mine.id, mine.id],
      actions: ['test', 'retry', 'test'],
      expiresIn: '2h',
      theme: { mode: 'dark', primaryColor: '#0f766e', logoUrl: 'https://cdn.example.com/logo.svg' },
    });
    expect(session.id).toMatch(/^[0-9a-f-]{36}$/);
    expect(session.url).toBe(`${api.url}/portal/${session.id}#token=${session.token}`);
    expect(session.expiresAt).toBe(new Date(before.getTime() + 2 * 3600_000).toISOString());

    const read = await readJson<WebhookPortalSessionRead>(
      await api.fetch('/api/webhook-portal/session', { token: session.token }),
    );
    expect(read).toEqual({
      id: session.id,
      partyId: world.pmc.id,
      partyName: world.pmc.name,
      registrationIds: [mine.id],
      actions: ['read', 'test', 'retry'],
      allowedOrigins: ['https://app.example.com'],
      theme: { mode: 'dark', primaryColor: '#0f766e', logoUrl: 'https://cdn.example.com/logo.svg' },
      expiresAt: session.expiresAt,
      created: before.toISOString(),
    });

    const [audit] = await auditOf('portal-session.create', world.pmc.full.token);
    expect(audit).toMatchObject({
      action: 'portal-session.create',
      accountId: world.pmc.full.id,
      detail: {
        sessionId: session.id,
        partyId: world.pmc.id,
        registrationIds: [mine.id],
        actions: ['read', 'test', 'retry'],
        allowedOrigins: ['https://app.example.com'],
        expiresAt: session.expiresAt,
      },
    });
  });

  it('is for Admin and Property Management Companies holding Webhook.Update', async () => {
    await expectAccessRules(api, world, {
      method: 'POST',
      path: '/api/webhook-portal/sessions',
      body: (caller: WorldParty) => ({
        partyId: caller.id,
        actions: [],
        expiresIn: '1h',
        allowedOrigins: [],
      }),
      allow: [1, 2],
      permission: 'Webhook.Update',
    });
  });

  it('opens sessions only for parties of the caller’s scope, over their own registrations', async () => {
    const { foreign } = await fixture();
    // Admin: any party; a PMC: its own and the parties it manages
    await openSession(world.admin, { partyId: world.otherPmc.id });
    await openSession(world.pmc, { partyId: world.contractor.id });
    await expectProblem(
      await postSession(world.pmc.full.token, {
        partyId: world.otherPmc.id,
        actions: [],
        expiresIn: '1h',
        allowedOrigins: [],
      }),
      404,
      { detail: `Party ${world.otherPmc.id} was not found` },
    );
    // another party's registration is none of this party's
    await expectBadFields(
      await postSession(world.pmc.full.token, {
        partyId: world.pmc.id,
        registrationIds: [foreign.id],
        actions: [],
        expiresIn: '1h',
        allowedOrigins: [],
      }),
      { registrationIds: [`${foreign.id} are no live registrations of party ${world.pmc.id}`] },
    );
  });

  it('refuses bad input with a 400 naming the field, and writes nothing', async () => {
    const valid = { partyId: world.pmc.id, actions: ['read'], expiresIn: '1h', allowedOrigins: [] };
    const cases: [Record<string, unknown>, string][] = [
      [{ expiresIn: '25h' }, 'expiresIn'],
      [{ expiresIn: '2d' }, 'expiresIn'],
      [{ expiresIn: '0m' }, 'expiresIn'],
      [{ expiresIn: 'forever' }, 'expiresIn'],
      [{ actions: ['delete'] }, 'actions.0'],
      [{ allowedOrigins: ['https://app.example.com/embed'] }, 'allowedOrigins.0'],
      [{ allowedOrigins: ['javascript:alert(1)'] }, 'allowedOrigins.0'],
      [{ theme: { primaryColor: 'red;}body{display:none' } }, 'theme.primaryColor'],
      [{ theme: { logoUrl: 'javascript:alert(1)' } }, 'theme.logoUrl'],
      [{ theme: { mode: 'sepia' } }, 'theme.mode'],
      [{ registrationIds: [] }, 'registrationIds'],
      [{ partyId: 'one' }, 'partyId'],
      [{ surprise: true }, 'surprise'],
    ];
    const count = async () => Number((await api.db.knex('webhook_portal_sessions').count({ n: '*' }))[0]!.n);
    const before = await count();
    for (const [change, field] of cases) {
      const response = await postSession(world.pmc.full.token, { ...valid, ...change });
      const problem = await expectProblem(response, 400);
      expect(Object.keys(problem.errors ?? {}), JSON.stringify(change)).toContain(field);
    }
    for (const missing of ['partyId', 'actions', 'expiresIn', 'allowedOrigins']) {
      const { [missing]: _left, ...rest } = valid as Record<string, unknown>;
      const problem = await expectProblem(await postSession(world.pmc.full.token, rest), 400);
      expect(Object.keys(problem.errors ?? {})).toContain(missing);
    }
    expect(await count()).toBe(before);
  });
});

describe('a portal token', () => {
  it('reads exactly its party’s registrations of the session, and nothing of another party (404)', async () => {
    const { mine, alsoMine, foreign, hook, alsoHook, foreignHook } = await fixture();
    const limited = await openSession(world.pmc, { registrationIds: [mine.id] });
    const token = limited.token;
    const listed = await readJson<{ items: WebhookRegistrationRead[] }>(
      await api.fetch('/api/webhook-registrations', { token }),
    );
    expect(listed.items.map((r) => r.id)).toEqual([mine.id]);
    const searched = await readJson<{ items: WebhookRegistrationRead[] }>(
      await api.fetch('/api/webhook-registrations/search', { method: 'POST', token, json: { filters: [] } }),
    );
    expect(searched.items.map((r) => r.id)).toEqual([mine.id]);
    await readJson(await api.fetch(`/api/webhook-registrations/${mine.id}`, { token }));
    await readJson(await api.fetch(`/api/webhook-registrations/${mine.id}/health`, { token }));
    for (const id of [alsoMine.id, foreign.id]) {
      await expectProblem(await api.fetch(`/api/webhook-registrations/${id}`, { token }), 404);
      await expectProblem(await api.fetch(`/api/webhook-registrations/${id}/health`, { token }), 404);
    }
    const hooks = await readJson<{ items: { id: number }[] }>(await api.fetch('/api/webhooks', { token }));
    expect(hooks.items.map((w) => w.id)).toEqual([hook]);
    await readJson(await api.fetch(`/api/webhooks/${hook}`, { token }));
    await readJson(await api.fetch(`/api/webhooks/${hook}/attempts`, { token }));
    for (const id of [alsoHook, foreignHook]) {
      await expectProblem(await api.fetch(`/api/webhooks/${id}`, { token }), 404);
      await expectProblem(await api.fetch(`/api/webhooks/${id}/attempts`, { token }), 404);
    }
    expect(
      (await readJson<unknown[]>(await api.fetch('/api/webhook-event-types', { token }))).length,
    ).toBeGreaterThan(0);

    // a session over the whole party sees both of its registrations, never the other party's
    const whole = await openSession(world.pmc);
    const all = await readJson<{ items: WebhookRegistrationRead[] }>(
      await api.fetch('/api/webhook-registrations', { token: whole.token }),
    );
    expect(all.items.map((r) => r.id).sort((a, b) => a - b)).toEqual([mine.id, alsoMine.id]);
    await expectProblem(await api.fetch(`/api/webhooks/${foreignHook}`, { token: whole.token }), 404);
  });

  it('of an Admin party reads for that party only, never every party as an Admin account does', async () => {
    const { mine } = await fixture();
    const session = await openSession(world.admin);
    await expectProblem(
      await api.fetch(`/api/webhook-registrations/${mine.id}`, { token: session.token }),
      404,
    );
    const listed = await readJson<{ items: unknown[] }>(
      await api.fetch('/api/webhook-registrations', { token: session.token }),
    );
    expect(listed.items).toEqual([]);
  });

  it('may act only as its actions allow: 403 naming the action otherwise', async () => {
    const { mine, alsoMine, hook } = await fixture();
    await setWebhookState(api.db.knex, hook, WebhookState.Failed);
    const readOnly = await openSession(world.pmc, { registrationIds: [mine.id] });
    const actions: [string, string, unknown][] = [
      ['test', `/api/webhook-registrations/${mine.id}/test`, undefined],
      ['retry', `/api/webhooks/${hook}/retry`, undefined],
      ['recover', `/api/webhook-registrations/${mine.id}/recover`, { since: '2000-01-01T00:00:00Z' }],
      ['rotate-secret', `/api/webhook-registrations/${mine.id}/rotate-secret`, undefined],
      ['manage', `/api/webhook-registrations/${mine.id}/pause`, undefined],
      ['manage', `/api/webhook-registrations/${mine.id}/resume`, undefined],
    ];
    for (const [action, path, json] of actions) {
      await expectProblem(
        await api.fetch(path, { method: 'POST', token: readOnly.token, ...(json ? { json } : {}) }),
        403,
        { detail: `This portal session does not allow the action "${action}"` },
      );
    }
    await expectProblem(
      await api.fetch(`/api/webhook-registrations/${mine.id}`, {
        method: 'PATCH',
        token: readOnly.token,
        json: { targetUrl: 'https://hooks.example.com/new' },
      }),
      403,
    );
    expect((await webhooksOf(api, mine.id))[0]!.state).toBe(WebhookState.Failed);

    const able = await openSession(world.pmc, {
      registrationIds: [mine.id],
      actions: ['test', 'retry', 'recover', 'rotate-secret', 'manage'],
    });
    const token = able.token;
    const tested = await readJson<{ statusCode: number }>(
      await api.fetch(`/api/webhook-registrations/${mine.id}/test`, { method: 'POST', token }),
    );
    expect(tested.statusCode).toBe(204);
    expect(target.requests.at(-1)!.headers['x-webhook-test']).toBe('1');
    await readJson(await api.fetch(`/api/webhooks/${hook}/retry`, { method: 'POST', token }));
    expect((await webhooksOf(api, mine.id))[0]!.state).toBe(WebhookState.Retrying);
    const operation = await readJson<{ id: number }>(
      await api.fetch(`/api/webhook-registrations/${mine.id}/recover`, {
        method: 'POST',
        token,
        json: { since: '2000-01-01T00:00:00Z' },
      }),
      202,
    );
    await api.deps.operations.idle();
    await readJson(await api.fetch(`/api/webhook-operations/${operation.id}`, { token }));
    await readJson(
      await api.fetch(`/api/webhook-registrations/${mine.id}/rotate-secret`, { method: 'POST', token }),
    );
    await readJson(await api.fetch(`/api/webhook-registrations/${mine.id}/pause`, { method: 'POST', token }));
    await readJson(
      await api.fetch(`/api/webhook-registrations/${mine.id}/resume`, { method: 'POST', token }),
    );
    // its actions reach no other registration, even of its own party
    await expectProblem(
      await api.fetch(`/api/webhook-registrations/${alsoMine.id}/test`, { method: 'POST', token }),
      404,
    );
    // a session limited to some registrations cannot create one; a whole-party one can, for its party only
    await expectProblem(
      await api.fetch('/api/webhook-registrations', {
        method: 'POST',
        token,
        json: {
          targetUrl: target.url,
          enabledEvents: [{ entityName: 'Property', type: 1 }],
          targetAuthorization: { type: 0 },
        },
      }),
      403,
    );
    const manager = await openSession(world.pmc, { actions: ['manage'] });
    const created = await readJson<{ id: number; partyId: number }>(
      await api.fetch('/api/webhook-registrations', {
        method: 'POST',
        token: manager.token,
        json: {
          targetUrl: target.url,
          enabledEvents: [{ entityName: 'Property', type: 1 }],
          targetAuthorization: { type: 0 },
        },
      }),
    );
    expect(created.partyId).toBe(world.pmc.id);
    const adminManager = await openSession(world.admin, { actions: ['manage'] });
    await expectBadFields(
      await api.fetch('/api/webhook-registrations', {
        method: 'POST',
        token: adminManager.token,
        json: {
          partyId: world.pmc.id,
          targetUrl: target.url,
          enabledEvents: [{ entityName: 'Property', type: 1 }],
          targetAuthorization: { type: 0 },
        },
      }),
      { partyId: ['Only an Admin may register webhooks for another party'] },
    );

    // what it did is in the operator trail, by no account, naming the session
    const [test] = await auditOf('registration.test');
    expect(test).toMatchObject({
      accountId: null,
      registrationId: mine.id,
      detail: { portalSessionId: able.id },
    });
    const [retry] = await auditOf('webhook.retry');
    expect(retry).toMatchObject({ accountId: null, detail: { portalSessionId: able.id } });
    const [registered] = await auditOf('registration.create');
    expect(registered).toMatchObject({
      accountId: null,
      registrationId: created.id,
      detail: { portalSessionId: manager.id, partyId: world.pmc.id },
    });
  });

  it('is refused by every route the portal does not call (403), by Gen1 (401), and cannot open sessions', async () => {
    const { mine } = await fixture();
    const session = await openSession(world.pmc, {
      actions: ['test', 'retry', 'recover', 'rotate-secret', 'manage'],
    });
    const token = session.token;
    const refused: [string, string, unknown?][] = [
      ['GET', '/api/accounts/myself'],
      ['GET', '/api/accounts'],
      ['GET', '/api/properties'],
      ['GET', '/api/operator-actions'],
      ['GET', '/api/webhook-groups?blocked=true'],
      ['GET', '/api/webhook-issues'],
      ['GET', '/api/webhook-stats'],
      ['POST', '/api/webhooks/bulk', { action: 'retry', filter: {} }],
      ['POST', `/api/webhook-registrations/${mine.id}/replay`, { since: '2000-01-01T00:00:00Z' }],
      ['DELETE', `/api/webhook-registrations/${mine.id}`],
      [
        'POST',
        '/api/webhook-portal/sessions',
        { partyId: world.pmc.id, actions: [], expiresIn: '1h', allowedOrigins: [] },
      ],
      ['DELETE', `/api/webhook-portal/sessions/${session.id}`],
    ];
    for (const [method, path, json] of refused) {
      await expectProblem(await api.fetch(path, { method, token, ...(json ? { json } : {}) }), 403, {
        detail: 'A portal session token cannot call this operation',
      });
    }
    // the Gen1 API knows no portal token
    await expectUnauthenticated(await api.fetch('/flats', { token }));
    // and an account's token cannot read a portal session
    await expectProblem(await api.fetch('/api/webhook-portal/session', { token: world.pmc.full.token }), 403);
  });

  it('ends when its session expires (401)', async () => {
    const session = await openSession(world.pmc, { expiresIn: '1m' });
    await readJson(await api.fetch('/api/webhook-portal/session', { token: session.token }));
    api.clock.advance(61_000);
    await expectUnauthenticated(await api.fetch('/api/webhook-portal/session', { token: session.token }));
    await expectUnauthenticated(await api.fetch('/api/webhook-registrations', { token: session.token }));
  });

  it('is refused when forged: an unknown session, another party, an access token’s audience', async () => {
    const session = await openSession(world.pmc);
    const key = await loadSigningKey(testPrivateKeyPem());
    const sign = (claims: Record<string, unknown>, subject: string, audienceSuffix = '/portal') => {
      const iat = Math.floor(api.clock.now().getTime() / 1000);
      return new SignJWT(claims)
        .setProtectedHeader({ alg: 'RS256', typ: 'JWT', kid: key.kid })
        .setSubject(subject)
        .setIssuer(api.deps.config.JWT_ISSUER)
        .setAudience(`${api.deps.config.JWT_AUDIENCE}${audienceSuffix}`)
        .setIssuedAt(iat)
        .setExpirationTime(iat + 600)
        .sign(key.privateKey);
    };
    const forged = [
      // a session that does not exist
      await sign({ scope: 'portal', partyId: String(world.pmc.id) }, '00000000-0000-4000-8000-000000000000'),
      // the real session claimed for another party
      await sign({ scope: 'portal', partyId: String(world.otherPmc.id) }, session.id),
      // the portal claims under the access-token audience
      await sign({ scope: 'portal', partyId: String(world.pmc.id) }, session.id, ''),
    ];
    for (const token of forged) {
      await expectUnauthenticated(await api.fetch('/api/webhook-portal/session', { token }));
      await expectUnauthenticated(await api.fetch('/api/webhook-registrations', { token }));
    }
  });
});

describe('DELETE /api/webhook-portal/sessions/{id}', () => {
  it('revokes: its token is refused at once (401), audited once, idempotent', async () => {
    const session = await openSession(world.pmc);
    await readJson(await api.fetch('/api/webhook-registrations', { token: session.token }));
    const revokesBefore = (await auditOf('portal-session.revoke')).length;
    // the other PMC cannot see it, nor can anyone revoke a session that does not exist
    await expectProblem(
      await api.fetch(`/api/webhook-portal/sessions/${session.id}`, {
        method: 'DELETE',
        token: world.otherPmc.full.token,
      }),
      404,
    );
    await expectProblem(
      await api.fetch('/api/webhook-portal/sessions/00000000-0000-4000-8000-000000000000', {
        method: 'DELETE',
        token: world.pmc.full.token,
      }),
      404,
    );
    await expectBadFields(
      await api.fetch('/api/webhook-portal/sessions/12', { method: 'DELETE', token: world.pmc.full.token }),
      { id: ['id must be a session id (a UUID)'] },
    );
    const revoked = await api.fetch(`/api/webhook-portal/sessions/${session.id}`, {
      method: 'DELETE',
      token: world.pmc.full.token,
    });
    expect(revoked.status).toBe(204);
    await expectUnauthenticated(await api.fetch('/api/webhook-registrations', { token: session.token }));
    await expectUnauthenticated(await api.fetch('/api/webhook-portal/session', { token: session.token }));
    // an Admin may revoke it again: nothing changes, nothing more is audited
    const again = await api.fetch(`/api/webhook-portal/sessions/${session.id}`, {
      method: 'DELETE',
      token: world.admin.full.token,
    });
    expect(again.status).toBe(204);
    const revokes = await auditOf('portal-session.revoke');
    expect(revokes.length).toBe(revokesBefore + 1);
    expect(revokes[0]).toMatchObject({ accountId: world.pmc.full.id, detail: { sessionId: session.id } });
  });
});

describe('PORTAL_ROUTE_RULES', () => {
  it('names only routes that exist', () => {
    const keys = new Set(ROUTES.map((route) => `${route.method.toUpperCase()} ${route.path}`));
    expect(Object.keys(PORTAL_ROUTE_RULES).filter((key) => !keys.has(key))).toEqual([]);
  });
});
