import { spawn, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { resolve } from 'node:path';
import { freePort } from '@platform/db/testing';
import { TokenScope, WebhookAuthType } from '@platform/shared';
import { createRemoteJWKSet, decodeProtectedHeader, jwtVerify } from 'jose';
import { Webhook } from 'standardwebhooks';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  createProperty,
  patchProperty,
  register,
} from '../../api/src/features/webhooks/webhook-test-support';
import {
  buildAccount,
  buildParty,
  login,
  startTestApi,
  testPrivateKeyPem,
  type TestApi,
} from '../../api/src/testing';

// The five target authorization types of spec 5.11 and the Standard Webhooks signature, as a real
// target process sees them when the real dispatcher process delivers what the real API enqueued.

const ROOT = resolve(import.meta.dirname, '../../..');

/**
 * The target: a node:http server in a process of its own that answers 204 to every delivery and
 * records it whole (path, headers, raw body); `GET /received` hands the record to the test.
 */
const TARGET = `
const http = require('node:http');
const received = [];
const server = http.createServer((req, res) => {
  const chunks = [];
  req.on('data', (chunk) => chunks.push(chunk));
  req.on('end', () => {
    if (req.method === 'GET' && req.url === '/received') {
      res.setHeader('content-type', 'application/json');
      res.end(JSON.stringify(received));
      return;
    }
    received.push({ path: req.url, headers: req.headers, body: Buffer.concat(chunks).toString('utf8') });
    res.statusCode = 204;
    res.end();
  });
});
server.listen(0, '127.0.0.1', () => console.log(JSON.stringify({ port: server.address().port })));
process.on('SIGTERM', () => server.close(() => process.exit(0)));
`;

interface Received {
  path: string;
  headers: Record<string, string>;
  body: string;
}

/** Polls `check` until it returns true, failing after `timeoutMs`. */
async function eventually(check: () => Promise<boolean> | boolean, timeoutMs = 20_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    if (await check()) return;
    if (Date.now() > deadline) throw new Error(`condition not met within ${timeoutMs} ms`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

/** Stops a child with SIGTERM (SIGKILL after 5 s) and waits for it. */
async function stop(child: ChildProcess | undefined): Promise<void> {
  if (!child || child.exitCode !== null || child.signalCode !== null) return;
  const closed = new Promise((r) => child.once('close', r));
  child.kill('SIGTERM');
  await Promise.race([closed, new Promise((r) => setTimeout(r, 5_000))]);
  if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
}

describe('target authorization and signatures, as the target sees them', () => {
  let api: TestApi;
  let target: ChildProcess;
  let dispatcher: ChildProcess;
  let targetUrl: string;
  let companyToken: string;
  let company: { id: number };
  /** The registrations by authorization type, with the signing secret shown at registration. */
  const registrations = new Map<number, { id: number; signingSecret: string }>();
  let ownProperty: number;
  let otherProperty: number;

  const received = async (): Promise<Received[]> =>
    (await (await fetch(`${targetUrl}/received`)).json()) as Received[];
  const deliveriesOf = async (type: number) => (await received()).filter((r) => r.path === `/type-${type}`);
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

    target = spawn(process.execPath, ['-e', TARGET], { stdio: ['ignore', 'pipe', 'inherit'] });
    const port = await new Promise<number>((resolvePort, reject) => {
      target.once('exit', (code) => reject(new Error(`target exited with ${code}`)));
      target.stdout!.once('data', (chunk: Buffer) => resolvePort(JSON.parse(chunk.toString()).port));
    });
    targetUrl = `http://127.0.0.1:${port}`;

    const authorizations: Record<number, Record<string, unknown>> = {
      [WebhookAuthType.NoAuth]: { type: 0 },
      [WebhookAuthType.BasicAuth]: { type: 1, username: 'hook-user', password: 'Basic-Secret-77' },
      [WebhookAuthType.PlatformBearerInHeader]: { type: 2 },
      [WebhookAuthType.PlatformBearerInBody]: { type: 3 },
      [WebhookAuthType.TargetApiToken]: { type: 4, apiKey: 'key-Abc123-Secret' },
    };
    for (const [type, targetAuthorization] of Object.entries(authorizations)) {
      const created = await register(api, companyToken, {
        targetUrl: `${targetUrl}/type-${type}`,
        targetAuthorization,
      });
      registrations.set(Number(type), { id: created.id, signingSecret: created.signingSecret });
    }

    const dispatcherPort = await freePort();
    dispatcher = spawn(resolve(ROOT, 'node_modules/.bin/tsx'), ['apps/dispatcher/src/main.ts'], {
      cwd: ROOT,
      env: {
        ...process.env,
        NODE_ENV: 'test',
        DATABASE_URL: api.db.url,
        DISPATCHER_PORT: String(dispatcherPort),
        LOG_LEVEL: 'warn',
        SECRET_ENCRYPTION_KEY: secretKey,
        JWT_PRIVATE_KEY: testPrivateKeyPem(),
      },
      stdio: ['ignore', 'inherit', 'inherit'],
    });
    await eventually(
      async () =>
        (await fetch(`http://127.0.0.1:${dispatcherPort}/healthz`).catch(() => null))?.status === 200,
    );

    // one change, fanned out to the five registrations of the company
    ownProperty = await createProperty(api, companyToken, 'Lindenhof');
    await eventually(async () => (await received()).length === 5);
  }, 60_000);

  afterAll(async () => {
    await stop(dispatcher);
    await stop(target);
    await api?.close();
  });

  it('type 0 (No Auth) sends no credentials at all', async () => {
    const [request] = await deliveriesOf(WebhookAuthType.NoAuth);
    expect(request!.headers.authorization).toBeUndefined();
    expect(request!.headers['x-api-key']).toBeUndefined();
    expect(JSON.parse(request!.body)).not.toHaveProperty('platformSignedBearerToken');
  });

  it('type 1 (Basic Auth) sends the registered user name and password', async () => {
    const [request] = await deliveriesOf(WebhookAuthType.BasicAuth);
    expect(request!.headers.authorization).toBe(
      `Basic ${Buffer.from('hook-user:Basic-Secret-77').toString('base64')}`,
    );
    expect(request!.headers['x-api-key']).toBeUndefined();
  });

  it('type 4 (Target API Token) sends the registered key as x-api-key', async () => {
    const [request] = await deliveriesOf(WebhookAuthType.TargetApiToken);
    expect(request!.headers['x-api-key']).toBe('key-Abc123-Secret');
    expect(request!.headers.authorization).toBeUndefined();
  });

  it('type 2 sends a bearer JWT of scope webhook, valid 30 minutes, that verifies with the API’s JWKS', async () => {
    const [request] = await deliveriesOf(WebhookAuthType.PlatformBearerInHeader);
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
    const [request] = await deliveriesOf(WebhookAuthType.PlatformBearerInBody);
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
    const requests = await received();
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
    const [first] = await deliveriesOf(WebhookAuthType.PlatformBearerInHeader);
    const [firstInBody] = await deliveriesOf(WebhookAuthType.PlatformBearerInBody);
    // over a second later, so a token signed anew would carry another iat and differ
    await new Promise((r) => setTimeout(r, 1_100));
    await patchProperty(api, companyToken, ownProperty, { name: 'Lindenhof II' });
    await eventually(async () => (await received()).length === 10);
    const [, second] = await deliveriesOf(WebhookAuthType.PlatformBearerInHeader);
    expect(JSON.parse(second!.body).entity.name).toBe('Lindenhof II');
    expect(bearerOf(second!)).toBe(bearerOf(first!));
    const [, secondInBody] = await deliveriesOf(WebhookAuthType.PlatformBearerInBody);
    expect(JSON.parse(secondInBody!.body).platformSignedBearerToken).toBe(
      JSON.parse(firstInBody!.body).platformSignedBearerToken,
    );
  });

  it('lets the type 2 token read its party’s data through the API, but not write it nor read another party’s', async () => {
    const [request] = await deliveriesOf(WebhookAuthType.PlatformBearerInHeader);
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
