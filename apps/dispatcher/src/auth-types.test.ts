import { randomBytes } from 'node:crypto';
import { TokenScope, WebhookAuthType } from '@platform/shared';
import {
  eventually,
  startDispatcher,
  startTestTarget,
  type DispatcherProcess,
  type TestTarget,
} from '@platform/testkit';
import { createRemoteJWKSet, decodeProtectedHeader, jwtVerify } from 'jose';
import { Webhook } from 'standardwebhooks';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createProperty, patchProperty, register } from '../../api/tests/support/webhooks';
import {
  buildAccount,
  buildParty,
  login,
  startTestApi,
  testPrivateKeyPem,
  type TestApi,
} from '../../api/tests/support/api';

// The five target authorization types (docs/dispatcher.md#what-the-target-receives) and the Standard Webhooks signature, as a real
// target sees them when the real dispatcher process delivers what the real API enqueued.

interface Received {
  path: string;
  headers: Record<string, string>;
  body: string;
}

describe('target authorization and signatures, as the target sees them', () => {
  let api: TestApi;
  let target: TestTarget;
  let dispatcher: DispatcherProcess;
  let companyToken: string;
  let company: { id: number };
  /** The registrations by authorization type, with the signing secret shown at registration. */
  const registrations = new Map<number, { id: number; signingSecret: string }>();
  let ownProperty: number;
  let otherProperty: number;

  const received = (): Received[] =>
    target.requests.map(({ path, headers, body }) => ({
      path,
      headers: headers as Record<string, string>,
      body,
    }));
  const deliveriesOf = (type: number) => received().filter((r) => r.path === `/type-${type}`);
  const bearerOf = (request: Received) => /^Bearer (.+)$/.exec(request.headers.authorization ?? '')?.[1];
  const jwks = () => createRemoteJWKSet(new URL(`${api.url}/.well-known/jwks.json`));
  const verifyToken = (token: string) =>
    jwtVerify(token, jwks(), {
      issuer: api.deps.config.JWT_ISSUER,
      audience: api.deps.config.JWT_AUDIENCE,
      algorithms: ['RS256'],
    });

  beforeAll(async () => {
    const secretKey = randomBytes(32).toString('base64');
    // the dispatcher opens what the API sealed, and signs with the key the API publishes
    api = await startTestApi({ SECRET_ENCRYPTION_KEY: secretKey });
    const party = await buildParty(api.deps, { type: 2, name: 'Hausverwaltung Süd' });
    company = party;
    companyToken = (await login(api, (await buildAccount(api.deps, { partyId: party.id })).email))
      .accessToken;
    const otherParty = await buildParty(api.deps, { type: 2 });
    const otherToken = (await login(api, (await buildAccount(api.deps, { partyId: otherParty.id })).email))
      .accessToken;
    otherProperty = await createProperty(api, otherToken, 'Not yours');

    target = await startTestTarget();

    const authorizations: Record<number, Record<string, unknown>> = {
      [WebhookAuthType.NoAuth]: { type: 0 },
      [WebhookAuthType.BasicAuth]: { type: 1, username: 'hook-user', password: 'Basic-Secret-77' },
      [WebhookAuthType.PlatformBearerInHeader]: { type: 2 },
      [WebhookAuthType.PlatformBearerInBody]: { type: 3 },
      [WebhookAuthType.TargetApiToken]: { type: 4, apiKey: 'key-Abc123-Secret' },
    };
    for (const [type, targetAuthorization] of Object.entries(authorizations)) {
      const created = await register(api, companyToken, {
        targetUrl: `${target.origin}/type-${type}`,
        targetAuthorization,
      });
      registrations.set(Number(type), { id: created.id, signingSecret: created.signingSecret });
    }

    dispatcher = await startDispatcher(api.db.url, {
      LOG_LEVEL: 'warn',
      SECRET_ENCRYPTION_KEY: secretKey,
      JWT_PRIVATE_KEY: testPrivateKeyPem(),
    });

    // one change, fanned out to the five registrations of the company
    ownProperty = await createProperty(api, companyToken, 'Lindenhof');
    await eventually(() => received().length === 5);
  }, 60_000);

  afterAll(async () => {
    await dispatcher?.stop();
    await target?.close();
    await api?.close();
  });

  it('type 0 (No Auth) sends no credentials at all', async () => {
    const [request] = deliveriesOf(WebhookAuthType.NoAuth);
    expect(request!.headers.authorization).toBeUndefined();
    expect(request!.headers['x-api-key']).toBeUndefined();
    expect(JSON.parse(request!.body)).not.toHaveProperty('platformSignedBearerToken');
  });

  it('type 1 (Basic Auth) sends the registered user name and password', async () => {
    const [request] = deliveriesOf(WebhookAuthType.BasicAuth);
    expect(request!.headers.authorization).toBe(
      `Basic ${Buffer.from('hook-user:Basic-Secret-77').toString('base64')}`,
    );
    expect(request!.headers['x-api-key']).toBeUndefined();
  });

  it('type 4 (Target API Token) sends the registered key as x-api-key', async () => {
    const [request] = deliveriesOf(WebhookAuthType.TargetApiToken);
    expect(request!.headers['x-api-key']).toBe('key-Abc123-Secret');
    expect(request!.headers.authorization).toBeUndefined();
  });

  it('type 2 sends a bearer JWT of scope webhook, valid 30 minutes, that verifies with the API’s JWKS', async () => {
    const [request] = deliveriesOf(WebhookAuthType.PlatformBearerInHeader);
    const token = bearerOf(request!);
    expect(token).toBeDefined();
    expect(decodeProtectedHeader(token!)).toMatchObject({ alg: 'RS256', kid: expect.any(String) });
    const { payload } = await verifyToken(token!);
    expect(payload).toMatchObject({
      sub: `webhook-registration:${registrations.get(WebhookAuthType.PlatformBearerInHeader)!.id}`,
      scope: TokenScope.Webhook,
      partyId: String(company.id),
      partyName: 'Hausverwaltung Süd',
      accountRole: '2',
    });
    expect(payload.exp! - payload.iat!).toBe(30 * 60);
    expect(JSON.parse(request!.body)).not.toHaveProperty('platformSignedBearerToken');
  });

  it('type 3 sends that kind of token in the body’s platformSignedBearerToken and no Authorization', async () => {
    const [request] = deliveriesOf(WebhookAuthType.PlatformBearerInBody);
    expect(request!.headers.authorization).toBeUndefined();
    const body = JSON.parse(request!.body) as Record<string, unknown>;
    expect(Object.keys(body).sort()).toEqual([
      'entity',
      'event',
      'initiatorAccountId',
      'initiatorPartyId',
      'platformSignedBearerToken',
    ]);
    const { payload } = await verifyToken(body.platformSignedBearerToken as string);
    expect(payload).toMatchObject({
      sub: `webhook-registration:${registrations.get(WebhookAuthType.PlatformBearerInBody)!.id}`,
      scope: TokenScope.Webhook,
      partyId: String(company.id),
    });
    expect(payload.exp! - payload.iat!).toBe(30 * 60);
  });

  it('signs every delivery as Standard Webhooks, verified by the standardwebhooks library with the secret shown at registration', async () => {
    const requests = received();
    expect(requests).toHaveLength(5);
    for (const [type, registration] of registrations) {
      const request = requests.find((r) => r.path === `/type-${type}`)!;
      const verifier = new Webhook(registration.signingSecret);
      expect(verifier.verify(request.body, request.headers)).toEqual(JSON.parse(request.body));
      const webhook = await api.db.knex('webhooks').where({ registration_id: registration.id }).first('id');
      expect(request.headers['webhook-id']).toBe(String(webhook.id));
      // the library does check: another registration's secret or a changed byte fails
      const otherSecret = registrations.get((type + 1) % 5)!.signingSecret;
      expect(() => new Webhook(otherSecret).verify(request.body, request.headers)).toThrow();
      expect(() =>
        verifier.verify(request.body.replace('Lindenhof', 'Lindenhoff'), request.headers),
      ).toThrow();
    }
  });

  it('reuses the bearer token of a registration for its next delivery', async () => {
    const [first] = deliveriesOf(WebhookAuthType.PlatformBearerInHeader);
    const [firstInBody] = deliveriesOf(WebhookAuthType.PlatformBearerInBody);
    // over a second later, so a token signed anew would carry another iat and differ
    await new Promise((r) => setTimeout(r, 1_100));
    await patchProperty(api, companyToken, ownProperty, { name: 'Lindenhof II' });
    await eventually(() => received().length === 10);
    const [, second] = deliveriesOf(WebhookAuthType.PlatformBearerInHeader);
    expect(JSON.parse(second!.body).entity.name).toBe('Lindenhof II');
    expect(bearerOf(second!)).toBe(bearerOf(first!));
    const [, secondInBody] = deliveriesOf(WebhookAuthType.PlatformBearerInBody);
    expect(JSON.parse(secondInBody!.body).platformSignedBearerToken).toBe(
      JSON.parse(firstInBody!.body).platformSignedBearerToken,
    );
  });

  it('lets the type 2 token read its party’s data through the API, but not write it nor read another party’s', async () => {
    const [request] = deliveriesOf(WebhookAuthType.PlatformBearerInHeader);
    const token = bearerOf(request!)!;
    api.clock.set(new Date()); // the test API's clock stands still; the token was signed just now
    const list = await api.fetch('/api/properties', { token });
    expect(list.status, await list.clone().text()).toBe(200);
    const page = (await list.json()) as { items: { id: number; name: string }[]; totalCount: number };
    expect(page.items.map((item) => item.id)).toEqual([ownProperty]);
    expect((await api.fetch(`/api/properties/${ownProperty}`, { token })).status).toBe(200);
    // another party's property: not found, and not in a batch read either
    expect((await api.fetch(`/api/properties/${otherProperty}`, { token })).status).toBe(404);
    const batch = await api.fetch('/api/properties/batch', {
      method: 'POST',
      token,
      json: { ids: [otherProperty] },
    });
    expect(await batch.json()).toEqual([]);
    // no writes
    const create = await api.fetch('/api/properties', {
      method: 'POST',
      token,
      json: { name: 'Intruder', street: 'A', postalCode: '1', city: 'B' },
    });
    expect(create.status).toBe(403);
    const patch = await api.fetch(`/api/properties/${ownProperty}`, {
      method: 'PATCH',
      token,
      json: { name: 'X' },
    });
    expect(patch.status).toBe(403);
    expect((await api.db.knex('properties').where({ id: ownProperty }).first('name')).name).toBe(
      'Lindenhof II',
    );
  });
});
