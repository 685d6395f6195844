import { TokenScope, WebhookAuthType, type WebhookTestResult } from '@platform/shared';
import { bodyOf, startTestTarget, type TestTarget } from '@platform/testkit';
import { createRemoteJWKSet, jwtVerify } from 'jose';
import { Webhook } from 'standardwebhooks';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { expectProblem, readJson } from '../../../tests/support/http';
import { buildAccount, expectAccessRules, login, type TestApi, useTestApi } from '../../../tests/support/api';
import { auditExceptLifecycle, register, targetOf } from '../../../tests/support/webhooks';

// POST /api/webhook-registrations/{id}/test: one delivery now, from the API, to real targets on
// 127.0.0.1, built and sent by the dispatcher's code (@platform/delivery).

const TIMEOUT_MS = 400;

const { api, world } = useTestApi({
  world: true,
  truncateWebhooks: true,
  config: { WEBHOOK_TIMEOUT: `${TIMEOUT_MS}ms` },
});
let target: TestTarget;

beforeAll(async () => {
  target = await startTestTarget();
});
afterAll(async () => {
  await target?.close();
});
beforeEach(async () => {
  await auditExceptLifecycle(api).del();
  target.script = () => ({});
  target.requests.length = 0;
});

async function sendTest(
  id: number,
  body?: unknown,
  token = world.pmc.full.token,
  on: TestApi = api,
): Promise<WebhookTestResult> {
  const response = await on.fetch(`/api/webhook-registrations/${id}/test`, {
    method: 'POST',
    token,
    ...(body === undefined ? {} : { json: body }),
  });
  return readJson<WebhookTestResult>(response);
}

const verifies = (secret: string, request: { body: string; headers: Record<string, unknown> }) => {
  try {
    new Webhook(secret).verify(request.body, request.headers as Record<string, string>);
    return true;
  } catch {
    return false;
  }
};

const auditRows = () => auditExceptLifecycle(api).orderBy('id');

describe('POST /api/webhook-registrations/{id}/test', () => {
  it('delivers one signed test event to the target, marked x-webhook-test: 1, and answers how it went', async () => {
    const created = await register(api, world.pmc.full.token, { targetUrl: `${target.origin}/in` });
    const result = await sendTest(created.id);
    expect(result).toEqual({
      statusCode: 200,
      durationMs: expect.any(Number),
      errorKind: null,
      responseExcerpt: 'ok',
    });

    expect(target.requests).toHaveLength(1);
    const [request] = target.requests;
    expect(request!.path).toBe('/in');
    expect(request!.headers['x-webhook-test']).toBe('1');
    expect(request!.headers['content-type']).toBe('application/json');
    // its own message id, never a webhook's: a receiver's dedupe keeps both apart
    expect(request!.webhookId).toMatch(/^test_[0-9a-f-]{36}$/);
    expect(verifies(created.signingSecret, request!)).toBe(true);
    // the delivery body (docs/webhooks.md#the-delivery-request), for the registration's first event, with the sample entity
    const first = created.enabledEvents[0]!;
    expect(bodyOf(request!)).toEqual({
      entity: { id: 0, test: true },
      event: {
        id: first.id,
        type: first.type,
        entityName: first.entityName,
        created: first.created,
        lastModified: null,
        deleted: null,
      },
      initiatorPartyId: world.pmc.id,
      initiatorAccountId: world.pmc.full.id,
    });

    // not a webhook: no webhook row, no attempt row; only the audit
    expect(await api.db.knex('webhooks').count({ n: '*' }).first()).toEqual({ n: 0 });
    expect(await api.db.knex('webhook_attempts').count({ n: '*' }).first()).toEqual({ n: 0 });
    expect(await auditRows()).toEqual([
      expect.objectContaining({
        action: 'registration.test',
        account_id: world.pmc.full.id,
        party_id: world.pmc.id,
        registration_id: created.id,
        webhook_id: null,
        changed: 0,
        detail: {
          webhookId: request!.webhookId,
          entityName: 'Property',
          type: 1,
          statusCode: 200,
          errorKind: null,
          durationMs: result.durationMs,
        },
      }),
    ]);
  });

  it('sends the event asked for, and refuses one the registration does not subscribe to', async () => {
    const created = await register(api, world.pmc.full.token, { targetUrl: target.url });
    await sendTest(created.id, { type: 3 });
    await sendTest(created.id, { entityName: 'property', type: 2 });
    await sendTest(created.id, {});
    expect(target.requests.map((r) => bodyOf(r).event)).toEqual([
      expect.objectContaining({ entityName: 'Property', type: 3 }),
      expect.objectContaining({ entityName: 'Property', type: 2 }),
      expect.objectContaining({ entityName: 'Property', type: 1 }),
    ]);

    const unit = await register(api, world.pmc.full.token, {
      targetUrl: target.url,
      enabledEvents: [
        { entityName: 'Unit', type: 2 },
        { entityName: 'Property', type: 1 },
      ],
    });
    const refuse = async (body: unknown, field: string) => {
      const problem = await expectProblem(
        await api.fetch(`/api/webhook-registrations/${unit.id}/test`, {
          method: 'POST',
          token: world.pmc.full.token,
          json: body,
        }),
        400,
      );
      expect(problem.errors?.[field]?.[0]).toContain(
        'it subscribes to Unit 2 (Updated), Property 1 (Created)',
      );
      return problem;
    };
    expect((await refuse({ entityName: 'Entrance' }, 'entityName')).detail).toContain(
      `Webhook registration ${unit.id} does not subscribe to Entrance;`,
    );
    expect((await refuse({ entityName: 'Unit', type: 1 }, 'type')).detail).toContain(
      'does not subscribe to Unit 1 (Created);',
    );
    await refuse({ type: 3 }, 'type');
    // the contract's own refusals
    for (const body of [{ type: 4 }, { entityName: 'Account' }, { extra: true }]) {
      await expectProblem(
        await api.fetch(`/api/webhook-registrations/${unit.id}/test`, {
          method: 'POST',
          token: world.pmc.full.token,
          json: body,
        }),
        400,
      );
    }
    expect(target.requests).toHaveLength(3);
    expect(await auditRows()).toHaveLength(3);
  });

  it('sends every authorization type as the dispatcher does, and redacts credentials echoed back', async () => {
    // the target echoes the request's authorization, API key and body
    target.script = (request) => ({
      status: 401,
      body: `${String(request.headers.authorization)} ${String(request.headers['x-api-key'])} ${request.body}`,
    });
    const basic = await register(api, world.pmc.full.token, {
      targetUrl: `${target.origin}/basic`,
      targetAuthorization: {
        type: WebhookAuthType.BasicAuth,
        username: 'hook-user',
        password: 'Pw-Secret-1',
      },
    });
    const apiKey = await register(api, world.pmc.full.token, {
      targetUrl: `${target.origin}/key`,
      targetAuthorization: { type: WebhookAuthType.TargetApiToken, apiKey: 'key-Secret-22' },
    });
    const bearer = await register(api, world.pmc.full.token, {
      targetUrl: `${target.origin}/bearer`,
      targetAuthorization: { type: WebhookAuthType.PlatformBearerInHeader },
    });
    const inBody = await register(api, world.pmc.full.token, {
      targetUrl: `${target.origin}/in-body`,
      targetAuthorization: { type: WebhookAuthType.PlatformBearerInBody },
    });

    const results = [];
    for (const registration of [basic, apiKey, bearer, inBody]) results.push(await sendTest(registration.id));
    for (const result of results) {
      // a failing target is an answer, not an error
      expect(result).toMatchObject({ statusCode: 401, errorKind: 'status' });
      expect(result.responseExcerpt).toContain('[redacted]');
    }
    const [basicRequest, keyRequest, bearerRequest, bodyRequest] = target.requests;
    expect(basicRequest!.headers.authorization).toBe(
      `Basic ${Buffer.from('hook-user:Pw-Secret-1').toString('base64')}`,
    );
    expect(results[0]!.responseExcerpt).not.toContain(
      Buffer.from('hook-user:Pw-Secret-1').toString('base64'),
    );
    expect(keyRequest!.headers['x-api-key']).toBe('key-Secret-22');
    expect(results[1]!.responseExcerpt).not.toContain('key-Secret-22');

    // the platform-signed token verifies with the API's JWKS, for the registration's party
    const jwks = createRemoteJWKSet(new URL(`${api.url}/.well-known/jwks.json`));
    const verifyToken = (token: string) =>
      jwtVerify(token, jwks, {
        issuer: api.deps.config.JWT_ISSUER,
        audience: api.deps.config.JWT_AUDIENCE,
        algorithms: ['RS256'],
      });
    const token = /^Bearer (.+)$/.exec(String(bearerRequest!.headers.authorization))?.[1];
    const { payload } = await verifyToken(token!);
    expect(payload).toMatchObject({
      sub: `webhook-registration:${bearer.id}`,
      scope: TokenScope.Webhook,
      partyId: String(world.pmc.id),
    });
    expect(results[2]!.responseExcerpt).not.toContain(token);
    const bodyToken = bodyOf<{ platformSignedBearerToken: string }>(bodyRequest!).platformSignedBearerToken;
    expect((await verifyToken(bodyToken)).payload).toMatchObject({
      sub: `webhook-registration:${inBody.id}`,
    });
    expect(bodyRequest!.headers.authorization).toBeUndefined();
    expect(results[3]!.responseExcerpt).not.toContain(bodyToken);

    for (const [registration, request] of [
      [basic, basicRequest],
      [apiKey, keyRequest],
      [bearer, bearerRequest],
      [inBody, bodyRequest],
    ] as const) {
      expect(verifies(registration.signingSecret, request!)).toBe(true);
      expect(request!.headers['x-webhook-test']).toBe('1');
    }
  });

  it('signs with both secrets during a rotation’s overlap', async () => {
    const created = await register(api, world.pmc.full.token, { targetUrl: target.url });
    const rotated = await api.fetch(`/api/webhook-registrations/${created.id}/rotate-secret`, {
      method: 'POST',
      token: world.pmc.full.token,
    });
    const { signingSecret } = (await rotated.json()) as { signingSecret: string };
    await sendTest(created.id);
    const [request] = target.requests;
    expect(String(request!.headers['webhook-signature']).split(' ')).toHaveLength(2);
    expect(verifies(signingSecret, request!)).toBe(true);
    expect(verifies(created.signingSecret, request!)).toBe(true);
  });

  it('times out as a delivery does, within WEBHOOK_TIMEOUT', async () => {
    const created = await register(api, world.pmc.full.token, { targetUrl: target.url });
    target.script = () => ({ hang: true });
    const result = await sendTest(created.id);
    expect(result).toEqual({
      statusCode: null,
      durationMs: expect.any(Number),
      errorKind: 'timeout',
      responseExcerpt: null,
    });
    expect(result.durationMs).toBeGreaterThanOrEqual(TIMEOUT_MS - 5);
    expect(result.durationMs).toBeLessThan(TIMEOUT_MS + 1000);
    expect(await auditRows()).toEqual([
      expect.objectContaining({
        detail: expect.objectContaining({ statusCode: null, errorKind: 'timeout' }),
      }),
    ]);
  });

  it('leaves the target’s circuit breaker alone: a test is not a retry', async () => {
    const created = await register(api, world.pmc.full.token, { targetUrl: target.url });
    await targetOf(api, created.id).update({
      breaker_state: 'open',
      open_until: new Date(Date.now() + 60_000),
    });
    expect(await sendTest(created.id)).toMatchObject({ statusCode: 200, errorKind: null });
    expect(await targetOf(api, created.id).first()).toMatchObject({ breaker_state: 'open' });
    // and a paused registration is tested all the same
    await api.fetch(`/api/webhook-registrations/${created.id}/pause`, {
      method: 'POST',
      token: world.pmc.full.token,
    });
    expect(await sendTest(created.id)).toMatchObject({ statusCode: 200 });
    expect(target.requests).toHaveLength(2);
  });

  it('answers 404 for another party’s, a deleted or an unknown registration, and sends nothing', async () => {
    const foreign = await register(api, world.otherPmc.full.token, { targetUrl: target.url });
    const deleted = await register(api, world.pmc.full.token, { targetUrl: target.url });
    const removed = await api.fetch(`/api/webhook-registrations/${deleted.id}`, {
      method: 'DELETE',
      token: world.pmc.full.token,
    });
    expect(removed.status).toBe(204);
    for (const id of [foreign.id, deleted.id, 999_999]) {
      await expectProblem(
        await api.fetch(`/api/webhook-registrations/${id}/test`, {
          method: 'POST',
          token: world.pmc.full.token,
        }),
        404,
      );
    }
    expect(target.requests).toHaveLength(0);
    expect(await auditRows()).toHaveLength(0);
    // an Admin sees every party's registrations
    expect(await sendTest(foreign.id, undefined, world.admin.full.token)).toMatchObject({ statusCode: 200 });
  });

  it('needs Webhook.Update: the registration permissions are not enough', async () => {
    const created = await register(api, world.pmc.full.token, { targetUrl: target.url });
    const registrar = await buildAccount(api.deps, {
      partyId: world.pmc.id,
      permissions: ['WebhookRegistration.Read', 'WebhookRegistration.Update', 'Webhook.Read'],
    });
    const { accessToken } = await login(api, registrar.email);
    await expectProblem(
      await api.fetch(`/api/webhook-registrations/${created.id}/test`, {
        method: 'POST',
        token: accessToken,
      }),
      403,
    );
    expect(target.requests).toHaveLength(0);
    expect(await auditRows()).toHaveLength(0);

    const inScope = async (caller: { type: number; full: { token: string } }) =>
      caller.type === 1 || caller.type === 2
        ? (await register(api, caller.full.token, { targetUrl: target.url })).id
        : created.id;
    await expectAccessRules(api, world, {
      method: 'POST',
      path: async (caller) => `/api/webhook-registrations/${await inScope(caller)}/test`,
      allow: [1, 2],
      permission: 'Webhook.Update',
    });
  });
});

describe('private targets (ALLOW_PRIVATE_TARGETS=false)', () => {
  const { api: strict, world: strictWorld } = useTestApi({
    world: true,
    config: { ALLOW_PRIVATE_TARGETS: 'false' },
  });

  it('refuses a target at a private address as a delivery does: a 200 with errorKind private-address, nothing sent', async () => {
    const created = await register(strict, strictWorld.pmc.full.token);
    // a registration made while private targets were allowed (registration refuses the literal now)
    await strict.db
      .knex('webhook_registrations')
      .where({ id: created.id })
      .update({ target_url: target.url });
    const result = await sendTest(created.id, undefined, strictWorld.pmc.full.token, strict);
    expect(result).toEqual({
      statusCode: null,
      durationMs: expect.any(Number),
      errorKind: 'private-address',
      responseExcerpt: null,
    });
    expect(target.requests).toHaveLength(0);
    expect(await auditExceptLifecycle(strict).where({ registration_id: created.id })).toEqual([
      expect.objectContaining({
        action: 'registration.test',
        detail: expect.objectContaining({ statusCode: null, errorKind: 'private-address' }),
      }),
    ]);
  });

  it('delivers to the same private target where private targets are allowed', async () => {
    // the main API of this file runs with the test default: private targets allowed
    const created = await register(api, world.pmc.full.token);
    await api.db.knex('webhook_registrations').where({ id: created.id }).update({ target_url: target.url });
    expect(await sendTest(created.id)).toMatchObject({ statusCode: 200, errorKind: null });
    expect(target.requests).toHaveLength(1);
  });
});
