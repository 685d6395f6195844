/**
 * Forged tokens against every operation. auth-attacks.test.ts sends each forged or
 * misused token to a read, a write and `/api/accounts/myself`; here every one of them goes to
 * EVERY operation of the OpenAPI document (enumerated as the fuzz run does), aimed at real rows
 * of the party whose account the forged token claims (the PMC of the test world), with a body
 * that writes: had any route skipped or weakened its token check, the request would change that
 * party's data. Each answer must be a bare 401, and the write-recording trigger of
 * security-test-support.ts (every INSERT, UPDATE and DELETE of every table, not only row counts) must
 * record nothing during the whole run. Operations declared `auth: 'public'` (login, refresh,
 * recovery: the anonymous flows) take no token and are left out; `/healthz`, the JWKS and the
 * document itself are not operations of the document.
 *
 * The webhook-scoped token (the dispatcher's service-signed one, which reads for its party) is
 * sent to every operation but GET, with its own party's ids and the same bodies: a 403 for each,
 * except the resources' search and batch reads it may call; and to every GET naming another
 * party's rows: 404 by id, 403 where the webhook scope is not allowed, never a row in a list.
 *
 * Last, the control: the same requests (same ids, same bodies, on the same database, since the
 * attacks wrote nothing) sent with the genuine token of the claimed account pass every guard and
 * each write operation really writes. So the refusals above are about the tokens alone, and a
 * missing check would have shown up as a write.
 */
import { createPublicKey } from 'node:crypto';
import { generatePrivateKeyPem, loadSigningKey, type SigningKey } from '@platform/crypto';
import { PartyType, TokenScope, WebhookState } from '@platform/shared';
import { setWebhookState } from '@platform/testkit';
import { base64url, decodeJwt, SignJWT, UnsecuredJWT, type JWTPayload } from 'jose';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { base32Decode, totp } from '../../src/features/mfa/totp';
import { gen1TokenService } from '../../src/gen1/gen1-tokens';
import { RESOURCES } from '../../src/resources/index';
import {
  SAMPLE_CREATE,
  SAMPLE_PATCH,
  uploadForm,
  worldParties,
  type SampleParties,
  type SampleVariant,
} from '../support/sample-writes';
import type { ResourceDefinition } from '../../src/resources/resource';
import {
  buildAccount,
  buildParty,
  login,
  TEST_PASSWORD,
  testPrivateKeyPem,
  type WorldParty,
  useTestApi,
} from '../support/api';
import { PORTAL_ROUTE_RULES, portalRouteKey } from '../../src/auth/portal-access';
import { ROUTES } from '../../src/routes';
import type { Operation } from './fuzz-document';
import {
  describeWrite,
  documentedOperations,
  enableConferencesOfPmcs,
  liveWebhookToken,
  openPortalSession,
  recordWrites,
  routeOf,
  unexplainedCounts,
  type WriteRecord,
  tokenMaker,
} from './security-test-support';

const MINUTE = 60_000;
/** Requests in flight at once. */
const PARALLEL = 8;
const SCOPE_REFUSAL = 'A token with scope "webhook" cannot call this operation';

// ---------------------------------------------------------------------------------------------
// The operations, as the fuzz run enumerates them

const { operations } = documentedOperations();

const keyOf = (operation: Operation) => `${operation.method} ${operation.path}`;
const nameOf = (operation: Operation) => `${operation.method.toUpperCase()} ${operation.path}`;
const routeFor = (operation: Operation) => routeOf(operation.method, operation.path)!;
/** The operations that take a token: all but those their route declares anonymous. */
const guarded = operations.filter((operation) => operation.auth !== 'public');
const anonymous = operations.filter((operation) => operation.auth === 'public');
const isRead = (operation: Operation) =>
  operation.method === 'get' || (operation.method === 'post' && /\/(search|batch)$/.test(operation.path));
const webhookScoped = (operation: Operation) => {
  const { auth } = routeFor(operation);
  return auth !== 'public' && (auth.scopes ?? []).includes(TokenScope.Webhook);
};

// ---------------------------------------------------------------------------------------------
// The victim's rows and the bodies that would write them

/** Which row of a resource (sample-writes.ts): `post` is the body of the create operation itself. */
type Variant = SampleVariant;
type Json = Record<string, unknown>;

const { api, world } = useTestApi({ world: true });
let key: SigningKey;
/** Claims of a real access token of the PMC's full account: the account every forged token claims. */
let claims: JWTPayload;
/** The parties the rows refer to; the User parties vote and grant mandates in each variant. */
let parties: SampleParties;

const resourceNamed = (name: string): ResourceDefinition => {
  const def = RESOURCES.find((resource) => resource.name === name);
  if (!def) throw new Error(`no resource ${name}`);
  return def;
};

/** A request body: JSON, or the multipart upload of a File (built afresh for each request). */
type Body = { kind: 'json'; value: () => unknown } | { kind: 'form'; fields: Json };

/** The ids, bodies and tokens of the run, built before the write log starts. */
interface Fixtures {
  /** The row an operation's `{id}` names, by the path before `/{id}` (a portal session's is a UUID). */
  rows: Map<string, number | string>;
  /** The childless row a DELETE removes, by the path before `/{id}`. */
  spares: Map<string, number | string>;
  /** Rows of single operations, by operation key (several: one per path parameter, in order). */
  overrides: Record<string, number | number[]>;
  bodies: Record<string, Body>;
  /** Query strings of operations with required query parameters. */
  queries: Record<string, string>;
}

let fixtures: Fixtures;
/** State the control changes as it goes (a new password, an MFA enrolment), read by its bodies. */
const state = { password: TEST_PASSWORD, mfaSecret: '', mfaRecoveryCode: undefined as string | undefined };
const NEW_PASSWORD = 'Hijacked-Password-9!';

async function post(path: string, json: unknown, token = world.pmc.full.token): Promise<Json> {
  const response = await api.fetch(path, { method: 'POST', token, json });
  expect(response.status, `POST ${path}: ${await response.clone().text()}`).toBe(200);
  return (await response.json()) as Json;
}

async function buildFixtures(): Promise<Fixtures> {
  const pmc = world.pmc;
  const spareVoters = await Promise.all(
    [0, 1].map(() => buildParty(api.deps, { type: PartyType.User, managedByPartyId: pmc.id })),
  );
  parties = worldParties(world, { main: world.user.id, spare: spareVoters[0]!.id, post: spareVoters[1]!.id });
  // an account of the PMC the account operations aim at (not the claimed one, which must live on)
  const target = await buildAccount(api.deps, { partyId: pmc.id, permissions: 'all' });
  const { group_id: groupId } = await api.deps.knex('accounts').where({ id: pmc.full.id }).first('group_id');
  // subscribed to Property events before any property exists, so each one makes a webhook
  // on a closed port of loopback: the control's test event is refused at once, nothing leaves the machine
  const registration = await post('/api/webhook-registrations', {
    targetUrl: 'http://127.0.0.1:9/pmc',
    enabledEvents: [1, 2, 3].map((type) => ({ entityName: 'Property', type })),
    targetAuthorization: { type: 0 },
  });

  async function createRow(name: string, variant: Variant): Promise<number> {
    const def = resourceNamed(name);
    const make = SAMPLE_CREATE[name];
    if (!make) throw new Error(`no create body for ${name}`);
    const body = await make(need, variant, parties);
    const response = await api.fetch(def.path, {
      method: 'POST',
      token: pmc.full.token,
      ...(def.name === 'File' ? { body: uploadForm(body) } : { json: body }),
    });
    expect(response.status, `create ${name} (${variant}): ${await response.clone().text()}`).toBe(200);
    return ((await response.json()) as { id: number }).id;
  }
  const made = new Map<string, Promise<number>>();
  function memo(name: string, variant: 'main' | 'spare'): Promise<number> {
    let id = made.get(`${variant} ${name}`);
    if (!id) {
      id = createRow(name, variant);
      made.set(`${variant} ${name}`, id);
    }
    return id;
  }
  function need(name: string): Promise<number> {
    return memo(name, 'main');
  }

  const rows = new Map<string, number | string>();
  const spares = new Map<string, number | string>();
  const bodies: Record<string, Body> = {};
  const json = (value: () => unknown): Body => ({ kind: 'json', value });
  for (const def of RESOURCES) {
    const id = await need(def.name);
    rows.set(def.path, id);
    spares.set(def.path, await memo(def.name, 'spare'));
    const create = await SAMPLE_CREATE[def.name]!(need, 'post', parties);
    bodies[`post ${def.path}`] = def.name === 'File' ? { kind: 'form', fields: create } : json(() => create);
    bodies[`post ${def.path}/search`] = json(() => ({ filters: [] }));
    bodies[`post ${def.path}/batch`] = json(() => ({ ids: [id] }));
    const patch = SAMPLE_PATCH[def.name];
    if (!patch) throw new Error(`no patch body for ${def.name}`);
    const patchBody = await patch((name) => createRow(name, 'post'), parties);
    bodies[`patch ${def.path}/{id}`] = json(() => patchBody);
  }
  // a third and a fourth property, so the PMC has four webhooks: one to abort, one to resolve, one
  // to retry, one delivered to resend
  await createRow('Property', 'post');
  await createRow('Property', 'post');
  const hooks = await api.deps
    .knex('webhooks')
    .where({ registration_id: Number(registration.id) })
    .orderBy('id')
    .pluck<number[]>('id');
  expect(hooks.length).toBeGreaterThanOrEqual(4);
  const [created, toResolve, failed, delivered] = hooks.map(Number) as [number, number, number, number];
  await setWebhookState(api.deps.knex, delivered, WebhookState.Successful, { completedAt: new Date() });
  // an attempt of the delivered one, for the read of one attempt's full record
  const [attempt] = await api.deps
    .knex('webhook_attempts')
    .insert({ webhook_id: delivered, number: 1, started_at: new Date(), duration_ms: 5, status_code: 200 })
    .returning<{ id: string }[]>('id');
  await setWebhookState(api.deps.knex, failed, WebhookState.Failed, { completedAt: new Date() });
  await api.deps
    .knex('webhooks')
    .where({ id: failed })
    .update({ attempt_count: 7, next_attempt_at: new Date('2020-01-01') });
  const detail = await post('/api/account-contact-details', {
    accountId: target.id,
    type: 'phone',
    value: '+49 30 1234567',
  });
  // a pending MFA enrolment of the claimed account, so a confirm with the right code would enable it
  state.mfaSecret = String((await post('/api/accounts/myself/mfa', undefined)).secret);

  rows.set('/api/accounts', target.id);
  spares.set('/api/accounts', target.id);
  rows.set('/api/account-contact-details', Number(detail.id));
  rows.set('/api/account-groups', Number(groupId));
  rows.set('/api/webhook-registrations', Number(registration.id));
  spares.set('/api/webhook-registrations', Number(registration.id));
  rows.set('/api/webhooks', created);
  rows.set('/api/webhook-notifications', pmc.id);
  // a portal session of the PMC, for the DELETE to revoke (the control does, last)
  const spareSession = await openPortalSession(api, pmc);
  rows.set('/api/webhook-portal/sessions', spareSession.id);
  spares.set('/api/webhook-portal/sessions', spareSession.id);
  // an operation of the PMC (a dry run: it changes nothing the other operations need)
  const operation = await api.fetch('/api/webhooks/bulk', {
    method: 'POST',
    token: pmc.full.token,
    json: { action: 'abort', filter: {}, dryRun: true },
  });
  expect(operation.status).toBe(202);
  await api.deps.operations.idle();
  rows.set('/api/webhook-operations', ((await operation.json()) as { id: number }).id);
  Object.assign(bodies, {
    'post /api/accounts': json(() => ({
      partyId: pmc.id,
      groupId,
      email: 'forged-account@example.com',
      firstName: 'Forged',
    })),
    'post /api/accounts/search': json(() => ({ filters: [] })),
    'post /api/accounts/batch': json(() => ({ ids: [target.id] })),
    'patch /api/accounts/batch': json(() => ({ ids: [target.id], patch: { firstName: 'Mallory' } })),
    'patch /api/accounts/{id}': json(() => ({ lastName: 'Mallory' })),
    'put /api/accounts/{id}/password': json(() => ({
      currentPassword: state.password,
      newPassword: NEW_PASSWORD,
    })),
    'put /api/accounts/{id}/skip-multi-factor-authentication': json(() => ({ allowed: true })),
    'post /api/account-contact-details': json(() => ({
      accountId: target.id,
      type: 'phone',
      value: '+49 30 7654321',
    })),
    'post /api/account-contact-details/batch': json(() => ({ ids: [detail.id] })),
    'patch /api/account-contact-details/batch': json(() => ({
      ids: [detail.id],
      patch: { label: 'Mallory' },
    })),
    'post /api/accounts/myself/mfa/confirm': json(() => ({
      code: totp(base32Decode(state.mfaSecret), api.clock.now()),
    })),
    'delete /api/accounts/myself/mfa': json(() => ({
      password: state.password,
      code: state.mfaRecoveryCode ?? totp(base32Decode(state.mfaSecret), api.clock.now()),
    })),
    'post /api/account/unblock-recovery-code': json(() => ({ email: target.email })),
    'post /api/accounts/unblock-recovery-code': json(() => ({ email: target.email })),
    'post /api/webhook-registrations': json(() => ({
      targetUrl: 'https://hooks.example.com/forged',
      enabledEvents: [{ entityName: 'Property', type: 1 }],
      targetAuthorization: { type: 0 },
    })),
    'post /api/webhook-registrations/search': json(() => ({ filters: [] })),
    'patch /api/webhook-registrations/{id}': json(() => ({ targetUrl: 'http://127.0.0.1:9/moved' })),
    'post /api/webhooks/search': json(() => ({ filters: [] })),
    'post /api/webhooks/bulk': json(() => ({ action: 'abort', filter: { states: [WebhookState.Created] } })),
    'post /api/webhook-registrations/{id}/recover': json(() => ({ since: '2026-01-01T00:00:00Z' })),
    'post /api/webhook-registrations/{id}/replay': json(() => ({ since: '2026-01-01T00:00:00Z' })),
    'post /api/webhook-registrations/{id}/test': json(() => ({})),
    'post /api/webhook-registrations/{id}/rotate-secret': json(() => ({ overlap: '1h' })),
    'put /api/webhook-notifications/{partyId}': json(() => ({
      emails: ['forged@example.com'],
      webhookUrl: 'https://hooks.example.com/operator',
    })),
    'post /api/webhook-portal/sessions': json(() => ({
      partyId: pmc.id,
      actions: ['test'],
      expiresIn: '1h',
      allowedOrigins: ['https://app.example.com'],
    })),
  });
  return {
    rows,
    spares,
    overrides: {
      // one's own password only: the claimed account's
      'put /api/accounts/{id}/password': pmc.full.id,
      'post /api/webhooks/{id}/resolve': toResolve,
      'post /api/webhooks/{id}/retry': failed,
      'post /api/webhooks/{id}/resend': delivered,
      'get /api/webhooks/{id}/attempts/{attemptId}': [delivered, Number(attempt!.id)],
    },
    bodies,
    queries: {
      'get /api/webhook-groups': 'blocked=true',
      'get /api/webhook-groups/progress': `registrationId=${registration.id}&groupKey=forged&fromWebhookId=${failed}`,
    },
  };
}

/** The path of `operation` naming the victim's row, with its required query. */
function pathOf(operation: Operation): string {
  const key = keyOf(operation);
  let path = operation.path;
  if (operation.pathParams.length) {
    const collection = operation.path.slice(0, operation.path.indexOf('/{'));
    const id =
      fixtures.overrides[key] ??
      (operation.method === 'delete' ? fixtures.spares : fixtures.rows).get(collection);
    if (id === undefined) throw new Error(`${nameOf(operation)}: no row of the victim to name; add one`);
    // an override may name every path parameter, in order
    for (const value of Array.isArray(id) ? id : [id]) path = path.replace(/\{\w+\}/, String(value));
  }
  const required = operation.queryParams.filter((parameter) => parameter.required);
  if (required.length && !fixtures.queries[key]) {
    throw new Error(`${nameOf(operation)}: no value for its required query parameters; add one`);
  }
  return fixtures.queries[key] ? `${path}?${fixtures.queries[key]}` : path;
}

interface Answer {
  status: number;
  text: string;
  headers: Headers;
}

/** Sends `operation` at the victim's row with its body, under `authorization` (none: no header). */
async function send(operation: Operation, authorization: string | undefined, path = pathOf(operation)) {
  const headers: Record<string, string> = authorization === undefined ? {} : { authorization };
  let body: string | FormData | undefined;
  if (operation.body) {
    const given = fixtures.bodies[keyOf(operation)];
    if (!given) throw new Error(`${nameOf(operation)}: no body for it; add one`);
    if (given.kind === 'form') body = uploadForm(given.fields);
    else {
      headers['content-type'] = 'application/json';
      body = JSON.stringify(given.value());
    }
  }
  const response = await api.fetch(path, { method: operation.method.toUpperCase(), headers, body });
  return { status: response.status, text: await response.text(), headers: response.headers } satisfies Answer;
}

/** Runs `work` over `items`, PARALLEL at a time. */
async function inParallel<T>(items: readonly T[], work: (item: T) => Promise<void>): Promise<void> {
  let next = 0;
  await Promise.all(
    Array.from({ length: PARALLEL }, async () => {
      while (next < items.length) await work(items[next++]!);
    }),
  );
}

/** Asserts `failures` is empty, showing the first of them. */
function expectNone(failures: string[], what: string): void {
  expect(failures.length, `${what}:\n${failures.slice(0, 30).join('\n')}`).toBe(0);
}

const excerpt = (text: string) => (text.length > 200 ? `${text.slice(0, 200)}…` : text);

/** What is wrong with an answer that should be a bare 401, or undefined. */
function notBare401(answer: Answer): string | undefined {
  if (answer.status !== 401) return `answered ${answer.status} ${excerpt(answer.text)}`;
  if (answer.text !== '') return `401 with a body: ${excerpt(answer.text)}`;
  if (answer.headers.get('content-type') !== null) return '401 with a content type';
  if (!/^Bearer /.test(answer.headers.get('www-authenticate') ?? '')) return '401 without a Bearer challenge';
  return undefined;
}

/** What is wrong with an answer that should be ProblemDetails of `status` (and `detail`), or undefined. */
function notProblem(answer: Answer, status: number, detail?: string): string | undefined {
  if (answer.status !== status) return `answered ${answer.status}, not ${status}: ${excerpt(answer.text)}`;
  if (answer.headers.get('content-type') !== 'application/problem+json')
    return `${status} not as ProblemDetails`;
  const problem = JSON.parse(answer.text) as { status?: unknown; detail?: unknown };
  if (problem.status !== status) return `${status} whose ProblemDetails says ${String(problem.status)}`;
  if (detail !== undefined && problem.detail !== detail) return `${status} saying ${String(problem.detail)}`;
  return undefined;
}

/** Every write recorded (and every row count changed) since `since` began, summarised. */
async function writesSince(since: { counts: Record<string, number> }): Promise<string[]> {
  const written: WriteRecord[] = await writes.take();
  const tally: Record<string, number> = {};
  for (const write of written) tally[describeWrite(write)] = (tally[describeWrite(write)] ?? 0) + 1;
  const unexplained = unexplainedCounts(since.counts, await writes.counts(), written);
  return [
    ...Object.entries(tally).map(([write, n]) => `${write} ×${n}`),
    ...unexplained.map((table) => `${table}: row count changed`),
  ];
}

/** Starts a no-write window: drops what was recorded before, notes every table's row count. */
async function startWindow(): Promise<{ counts: Record<string, number> }> {
  await writes.take();
  return { counts: await writes.counts() };
}

// ---------------------------------------------------------------------------------------------
// The tokens

let writes: Awaited<ReturnType<typeof recordWrites>>;
/** Each forged or misused credential, as the Authorization header carrying it (undefined: none). */
let forged: { name: string; authorization: string | undefined }[];
/** Webhook tokens of live registrations of the PMC (the victim) and of the other PMC. */
let ownHook: string;
let otherHook: string;
/** Portal sessions: of the PMC with every action, of the PMC reading only, of the other PMC. */
let ownPortal: { id: string; token: string };
let readOnlyPortal: { id: string; token: string };
let otherPortal: { id: string; token: string };
const summary: string[] = [];
const started = performance.now();

const { nowSeconds, accessClaims, mint } = tokenMaker(() => ({ api, claims, key }));

/** A webhook token of a live registration of `party`. */
const webhookToken = async (party: WorldParty) => (await liveWebhookToken(api, key, party)).token;

async function forgeTokens(): Promise<{ name: string; authorization: string | undefined }[]> {
  const real = world.pmc.full.token;
  const [realHeader, realPayload, realSignature] = real.split('.') as [string, string, string];
  const publicPem = createPublicKey(testPrivateKeyPem()).export({ type: 'spki', format: 'pem' }).toString();
  const otherKey = await loadSigningKey(generatePrivateKeyPem());
  const noneHeader = base64url.encode(JSON.stringify({ alg: 'none', typ: 'JWT', kid: key.kid }));
  const hs256 = async (payload: JWTPayload, secret: string) =>
    new SignJWT(payload)
      .setProtectedHeader({ alg: 'HS256', typ: 'JWT', kid: key.kid })
      .sign(new TextEncoder().encode(secret));
  const gen1 = gen1TokenService(api.deps.tokens, api.deps.config.JWT_GEN1_AUDIENCE);
  const gen1Token = await gen1.signAccessToken({
    accountId: world.pmc.full.id,
    partyId: world.pmc.id,
    partyName: 'PMC',
    partyType: PartyType.PropertyManagementCompany,
    email: world.pmc.full.email,
    scope: TokenScope.Platform,
    permissions: claims.permissions as string,
    telemetry: { UnitCount: 0, ProcessCount: 0 },
  });
  expect(await gen1.verifyAccessToken(gen1Token)).toBeDefined();
  // a token that was valid and verified once (so remembered by the token service), then expired
  const now = api.clock.now();
  api.clock.set(new Date(now.getTime() - 16 * MINUTE));
  const stale = await mint(accessClaims());
  expect((await api.fetch('/api/accounts/myself', { token: stale })).status).toBe(200);
  api.clock.set(now);
  const hourAgo = nowSeconds() - 3600;
  const inAnHour = nowSeconds() + 3600;
  const { refreshToken } = await login(api, world.pmc.full.email);
  const mfaToken = (await api.deps.tokens.signMfaToken(world.pmc.full.id)).token;
  const hookClaims = decodeJwt(ownHook);
  const escalated = base64url.encode(JSON.stringify({ ...claims, accountRole: String(PartyType.Admin) }));

  // portal tokens that are no longer, or never were, a live session's
  const revoked = await openPortalSession(api, world.pmc);
  const revoke = await api.fetch(`/api/webhook-portal/sessions/${revoked.id}`, {
    method: 'DELETE',
    token: world.pmc.full.token,
  });
  expect(revoke.status).toBe(204);
  const expired = await openPortalSession(api, world.pmc);
  await api.deps
    .knex('webhook_portal_sessions')
    .where({ id: expired.id })
    .update({ expires_at: new Date(0) });
  const portalClaims = decodeJwt(ownPortal.token);
  const portalAudience = `${api.deps.config.JWT_AUDIENCE}/portal`;

  const bearer: [string, string][] = [
    ['a revoked portal session’s token', revoked.token],
    ['an expired portal session’s token', expired.token],
    ['a portal token, alg none', new UnsecuredJWT(portalClaims).encode()],
    ['a portal token by another key', await mint(portalClaims, otherKey)],
    [
      'a portal token of an unknown session',
      await mint({ ...portalClaims, sub: '00000000-0000-4000-8000-000000000000' }),
    ],
    [
      'a portal token claiming another party',
      await mint({ ...portalClaims, partyId: String(world.otherPmc.id) }),
    ],
    [
      'portal claims under the access-token audience',
      await mint({ ...portalClaims, aud: api.deps.config.JWT_AUDIENCE }),
    ],
    ['access claims under the portal audience', await mint(accessClaims({ aud: portalAudience }))],
    [
      'a portal token living past 24 hours',
      await mint({ ...portalClaims, exp: Number(portalClaims.iat) + 25 * 3600 }),
    ],
    ['alg none, no signature part', new UnsecuredJWT(accessClaims()).encode()],
    [
      'alg none under the API kid, empty signature',
      `${noneHeader}.${base64url.encode(JSON.stringify(accessClaims()))}.`,
    ],
    ['alg none with a real signature', `${noneHeader}.${realPayload}.${realSignature}`],
    ['HS256 keyed with the public key (PEM)', await hs256(accessClaims(), publicPem)],
    ['HS256 keyed with the public key (JWK)', await hs256(accessClaims(), JSON.stringify(key.publicJwk))],
    ['RS256 by another key under the API kid', await mint(accessClaims(), otherKey)],
    ['expired an hour ago', await mint(accessClaims({ iat: hourAgo, exp: hourAgo + 15 * 60 }))],
    ['expired after it was verified and remembered', stale],
    [
      'not yet valid: issued in an hour',
      await mint(accessClaims({ iat: inAnHour, exp: inAnHour + 15 * 60 })),
    ],
    ['not yet valid: nbf in a minute', await mint(accessClaims({ nbf: nowSeconds() + 60 }))],
    ['a wrong issuer', await mint(accessClaims({ iss: 'https://evil.example.com' }))],
    ['no issuer', await mint(accessClaims({ iss: undefined }))],
    ['a wrong audience', await mint(accessClaims({ aud: 'someone-else' }))],
    ['a wrong audience, as a list', await mint(accessClaims({ aud: ['someone-else'] }))],
    ['no audience', await mint(accessClaims({ aud: undefined }))],
    ['a Gen1 token', gen1Token],
    [
      'Gen2 claims under the Gen1 audience',
      await mint(accessClaims({ aud: api.deps.config.JWT_GEN1_AUDIENCE })),
    ],
    ['a refresh token', refreshToken],
    ['an MFA token', mfaToken],
    ['an escalated claim under the original signature', `${realHeader}.${escalated}.${realSignature}`],
    ['a webhook token, alg none', new UnsecuredJWT(hookClaims).encode()],
    ['a webhook token by another key', await mint(hookClaims, otherKey)],
    ['malformed: a.b.c', 'a.b.c'],
    ['malformed: two segments', `${realHeader}.${realPayload}`],
    ['malformed: the signature cut short', real.slice(0, -12)],
    ['malformed: a fourth segment', `${real}.${realSignature}`],
    ['malformed: not base64url', `${realHeader}.${realPayload}!.${realSignature}`],
  ];
  return [
    ...bearer.map(([name, token]) => ({ name, authorization: `Bearer ${token}` })),
    { name: 'malformed: the token without "Bearer"', authorization: real },
    {
      name: 'malformed: Basic credentials',
      authorization: `Basic ${btoa(`${world.pmc.full.email}:${TEST_PASSWORD}`)}`,
    },
    { name: 'no Authorization header', authorization: undefined },
  ];
}

beforeAll(async () => {
  key = await loadSigningKey(testPrivateKeyPem());
  claims = decodeJwt(world.pmc.full.token);
  await enableConferencesOfPmcs(api, world);
  fixtures = await buildFixtures();
  ownHook = await webhookToken(world.pmc);
  otherHook = await webhookToken(world.otherPmc);
  ownPortal = await openPortalSession(api, world.pmc);
  readOnlyPortal = await openPortalSession(api, world.pmc, ['read']);
  otherPortal = await openPortalSession(api, world.otherPmc);
  forged = await forgeTokens();
  writes = await recordWrites(api);
}, 120_000);

afterAll(async () => {
  const seconds = ((performance.now() - started) / 1000).toFixed(1);
  console.log(`forged tokens: ${seconds} s in all\n${summary.join('\n')}`);
});

// ---------------------------------------------------------------------------------------------

describe('every operation of the OpenAPI document', () => {
  it('is covered: the anonymous ones are the auth flows their routes declare public', () => {
    expect(operations).toHaveLength(ROUTES.length);
    expect(anonymous.map(nameOf).filter((name) => !name.includes(' /api/auth/'))).toEqual([]);
    expect(guarded.length).toBeGreaterThan(200);
    // every guarded operation has a row to name and a body that writes (pathOf and send throw)
    for (const operation of guarded) {
      pathOf(operation);
      if (operation.body && !fixtures.bodies[keyOf(operation)])
        throw new Error(`no body for ${nameOf(operation)}`);
    }
    expect(Object.keys(SAMPLE_CREATE).sort()).toEqual(RESOURCES.map((def) => def.name).sort());
  });

  it('answers every forged or misused token with a bare 401, and nothing is written', async () => {
    const since = await startWindow();
    const failures: string[] = [];
    const refusedBy = new Map<string, number>();
    const pairs = guarded.flatMap((operation) => forged.map((token) => ({ operation, token })));
    const begun = performance.now();
    await inParallel(pairs, async ({ operation, token }) => {
      const problem = notBare401(await send(operation, token.authorization));
      if (problem) {
        failures.push(`${token.name} → ${nameOf(operation)}: ${problem}`);
        refusedBy.set(token.name, (refusedBy.get(token.name) ?? 0) + 1);
      }
    });
    const written = await writesSince(since);
    summary.push(
      `  ${guarded.length} operations (${anonymous.length} anonymous left out) × ${forged.length} forged tokens = ` +
        `${pairs.length} requests in ${((performance.now() - begun) / 1000).toFixed(1)} s: ` +
        `${pairs.length - failures.length} bare 401s; writes: ${written.length ? written.join(', ') : 'none'}`,
    );
    const byToken = [...refusedBy].map(([name, n]) => `${name}: ${n} operations`).join('\n');
    expect(
      failures.length,
      `answers that were not a bare 401, by token:\n${byToken}\nthe first of them:\n${failures.slice(0, 30).join('\n')}`,
    ).toBe(0);
    expect(written, 'writes during the forged-token run').toEqual([]);
  }, 60_000);
});

describe('the webhook-scoped token', () => {
  it('of the victim party itself: every operation but GET is refused (403), save the search and batch reads, and nothing is written', async () => {
    const since = await startWindow();
    const failures: string[] = [];
    let refused = 0;
    const nonGets = guarded.filter((operation) => operation.method !== 'get');
    const allowed = nonGets.filter(webhookScoped);
    // the scope admits reads alone
    expect(allowed.filter((operation) => !isRead(operation)).map(nameOf)).toEqual([]);
    await inParallel(nonGets, async (operation) => {
      const answer = await send(operation, `Bearer ${ownHook}`);
      const problem = webhookScoped(operation)
        ? answer.status === 200
          ? undefined
          : `answered ${answer.status}: ${excerpt(answer.text)}`
        : notProblem(answer, 403, SCOPE_REFUSAL);
      if (problem) failures.push(`${nameOf(operation)}: ${problem}`);
      else if (!webhookScoped(operation)) refused++;
    });
    const written = await writesSince(since);
    summary.push(
      `  webhook token of the victim: ${nonGets.length} operations but GET, ${refused} refused with 403, ` +
        `${allowed.length} search/batch reads answered; writes: ${written.length ? written.join(', ') : 'none'}`,
    );
    expectNone(failures, 'answers against the conventions');
    expect(written, 'writes of the webhook token').toEqual([]);
  }, 60_000);

  it('of another party: every GET of the victim’s rows is a 404 (403 where the scope is not allowed), no list holds them, and nothing is written', async () => {
    const since = await startWindow();
    const failures: string[] = [];
    const gets = guarded.filter((operation) => operation.method === 'get');
    let notFound = 0;
    let lists = 0;
    let refused = 0;
    await inParallel(gets, async (operation) => {
      const name = nameOf(operation);
      if (!webhookScoped(operation)) {
        const problem = notProblem(await send(operation, `Bearer ${otherHook}`), 403, SCOPE_REFUSAL);
        if (problem) failures.push(`${name}: ${problem}`);
        else refused++;
        return;
      }
      if (operation.pathParams.length) {
        // the control: the victim's own webhook token reads the row
        const own = await send(operation, `Bearer ${ownHook}`);
        if (own.status !== 200) failures.push(`${name}: the victim's own webhook token got ${own.status}`);
        const problem = notProblem(await send(operation, `Bearer ${otherHook}`), 404);
        if (problem) failures.push(`${name}: ${problem}`);
        else notFound++;
        return;
      }
      // a list: the victim's rows of the collection are in its own token's page, never in the other's
      const listPath = pathOf(operation);
      const path = `${listPath}${listPath.includes('?') ? '&' : '?'}PageSize=100`;
      const ids = async (token: string) => {
        const answer = await send(operation, `Bearer ${token}`, path);
        if (answer.status !== 200) {
          failures.push(`${name}: answered ${answer.status} ${excerpt(answer.text)}`);
          return [];
        }
        return (JSON.parse(answer.text) as { items: { id: number | string }[] }).items.map((item) => item.id);
      };
      const victimRows = [fixtures.rows.get(operation.path), fixtures.spares.get(operation.path)];
      if (victimRows.includes(undefined)) failures.push(`${name}: no row of the victim to look for`);
      if (!(await ids(ownHook)).includes(victimRows[0]!))
        failures.push(`${name}: the victim's token misses its row`);
      const seen = (await ids(otherHook)).filter((id) => victimRows.includes(id));
      if (seen.length)
        failures.push(`${name}: another party's webhook token lists the victim's rows ${seen.join(', ')}`);
      else lists++;
    });
    const written = await writesSince(since);
    summary.push(
      `  webhook token of another party: ${gets.length} GETs, ${notFound} by id answered 404, ${lists} lists without ` +
        `the victim's rows, ${refused} refused with 403; writes: ${written.length ? written.join(', ') : 'none'}`,
    );
    expectNone(failures, 'answers against the conventions');
    expect(written, 'writes of the webhook token').toEqual([]);
  }, 60_000);
});

const PORTAL_REFUSAL = 'A portal session token cannot call this operation';
const portalRule = (operation: Operation) => PORTAL_ROUTE_RULES[portalRouteKey(routeFor(operation))];

describe('the endpoint-portal token', () => {
  it('of the victim party with every action: every operation the portal does not call is refused (403), and nothing is written', async () => {
    const since = await startWindow();
    const failures: string[] = [];
    const outside = guarded.filter((operation) => !portalRule(operation));
    expect(outside.length).toBeGreaterThan(200);
    await inParallel(outside, async (operation) => {
      const problem = notProblem(await send(operation, `Bearer ${ownPortal.token}`), 403, PORTAL_REFUSAL);
      if (problem) failures.push(`${nameOf(operation)}: ${problem}`);
    });
    const written = await writesSince(since);
    summary.push(
      `  portal token of the victim: ${outside.length} operations outside the portal refused with 403; ` +
        `writes: ${written.length ? written.join(', ') : 'none'}`,
    );
    expectNone(failures, 'answers against the conventions');
    expect(written, 'writes of the portal token').toEqual([]);
  }, 60_000);

  it('of a read-only session: every portal operation of another action is refused (403 naming it), and nothing is written', async () => {
    const since = await startWindow();
    const failures: string[] = [];
    const acting = guarded.filter(
      (operation) => portalRule(operation) && portalRule(operation)!.action !== 'read',
    );
    expect(acting.length).toBeGreaterThanOrEqual(8);
    await inParallel(acting, async (operation) => {
      const detail = `This portal session does not allow the action "${portalRule(operation)!.action}"`;
      const problem = notProblem(await send(operation, `Bearer ${readOnlyPortal.token}`), 403, detail);
      if (problem) failures.push(`${nameOf(operation)}: ${problem}`);
    });
    const written = await writesSince(since);
    expectNone(failures, 'answers against the conventions');
    expect(written, 'writes of the read-only portal token').toEqual([]);
  }, 60_000);

  it('of another party: every portal operation naming the victim’s rows is a 404, no list holds them, and nothing is written', async () => {
    const since = await startWindow();
    const failures: string[] = [];
    const inPortal = guarded.filter((operation) => portalRule(operation));
    let notFound = 0;
    let lists = 0;
    await inParallel(inPortal, async (operation) => {
      const name = nameOf(operation);
      if (operation.pathParams.length) {
        const problem = notProblem(await send(operation, `Bearer ${otherPortal.token}`), 404);
        if (problem) failures.push(`${name}: ${problem}`);
        else notFound++;
        return;
      }
      const victimRow = fixtures.rows.get(operation.path);
      if (!isRead(operation) || victimRow === undefined) return;
      const answer = await send(operation, `Bearer ${otherPortal.token}`);
      const own = await send(operation, `Bearer ${ownPortal.token}`);
      if (answer.status !== 200 || own.status !== 200) {
        failures.push(`${name}: answered ${answer.status} / ${own.status} to the portal tokens`);
        return;
      }
      const ids = (text: string) =>
        (JSON.parse(text) as { items: { id: unknown }[] }).items.map((item) => item.id);
      if (!ids(own.text).includes(victimRow))
        failures.push(`${name}: the victim's own portal misses its row`);
      if (ids(answer.text).includes(victimRow))
        failures.push(`${name}: another party's portal lists the victim's row`);
      else lists++;
    });
    const written = await writesSince(since);
    summary.push(
      `  portal token of another party: ${notFound} portal operations by id answered 404, ${lists} lists without ` +
        `the victim's rows; writes: ${written.length ? written.join(', ') : 'none'}`,
    );
    expect(notFound).toBeGreaterThanOrEqual(10);
    expectNone(failures, 'answers against the conventions');
    expect(written, 'writes of the other party’s portal token').toEqual([]);
  }, 60_000);
});

describe('the control: the same requests under the genuine token of the claimed account', () => {
  it('pass every guard, and every write operation writes', async () => {
    const failures: string[] = [];
    let wrote = 0;
    // one after another, in ORDER (deletes last), reading the write log after each answer
    await writes.take();
    for (const operation of guarded) {
      // an Admin-only operation (the MFA-skip setting) under the Admin's genuine token
      const { auth } = routeFor(operation);
      const adminOnly = auth !== 'public' && !auth.allow.includes(PartyType.PropertyManagementCompany);
      // an operation only a portal token may call (its session's read) under the victim's portal token
      const portalOnly =
        auth !== 'public' && auth.scopes?.length === 1 && auth.scopes[0] === TokenScope.Portal;
      const answer = await send(
        operation,
        `Bearer ${portalOnly ? ownPortal.token : (adminOnly ? world.admin : world.pmc).full.token}`,
      );
      const key = keyOf(operation);
      const written = await writes.take();
      if (answer.status < 200 || answer.status >= 300) {
        failures.push(`${nameOf(operation)}: answered ${answer.status} ${excerpt(answer.text)}`);
        continue;
      }
      if (!isRead(operation)) {
        if (written.length) wrote++;
        else failures.push(`${nameOf(operation)}: wrote nothing`);
      }
      if (key === 'post /api/accounts/myself/mfa') state.mfaSecret = String(JSON.parse(answer.text).secret);
      if (key === 'post /api/accounts/myself/mfa/confirm') {
        state.mfaRecoveryCode = (JSON.parse(answer.text) as { recoveryCodes: string[] }).recoveryCodes[0];
      }
      if (key === 'put /api/accounts/{id}/password') state.password = NEW_PASSWORD;
    }
    const writeOperations = guarded.filter((operation) => !isRead(operation)).length;
    summary.push(
      `  control: ${guarded.length} operations under the genuine token, ${wrote} of ${writeOperations} write operations wrote`,
    );
    expectNone(failures, 'operations the genuine token did not pass, or that wrote nothing');
  }, 60_000);
});
