import type { AddressInfo } from 'node:net';
import type { Server } from 'node:http';
import { randomBytes } from 'node:crypto';
import { createSecretBox, generatePrivateKeyPem, loadSigningKey, parseSecretKey } from '@platform/crypto';
import { createTestDatabase, truncateWebhooks, type TestDatabase } from '@platform/testkit';
import { newPartyPlacement } from '@platform/db';
import { PERMISSIONS, type PartyType, type PermissionName, permissionByName } from '@platform/shared';
import pino, { type Logger } from 'pino';
import { afterAll, beforeAll, beforeEach, expect } from 'vitest';
import { createApp } from '../../src/app';
import { OperationRunner } from '../../src/features/webhook-operations/operation-runner';
import { hashPassword } from '../../src/auth/passwords';
import { base32Decode, totp } from '../../src/features/mfa/totp';
import { TokenService } from '../../src/auth/tokens';
import { testConfig, type Config } from '../../src/config';
import type { AppDeps } from '../../src/deps';
import { recordStatus } from './status-recorder';

/** A clock tests can move. */
export interface TestClock {
  now: () => Date;
  set(date: Date): void;
  advance(ms: number): void;
}

export function testClock(start = new Date()): TestClock {
  let current = start.getTime();
  return {
    now: () => new Date(current),
    set: (date) => (current = date.getTime()),
    advance: (ms) => (current += ms),
  };
}

let cachedPem: string | undefined;

/**
 * The PKCS#8 PEM of the RS256 key every test API signs with, so tests can mint their own tokens
 * (`loadSigningKey(testPrivateKeyPem())`).
 */
export function testPrivateKeyPem(): string {
  cachedPem ??= generatePrivateKeyPem();
  return cachedPem;
}

export interface TestApi {
  db: TestDatabase;
  deps: AppDeps;
  clock: TestClock;
  /** Base URL of the API listening on 127.0.0.1. */
  url: string;
  /** fetch against the API: `api.fetch('/api/accounts', { token })`. */
  fetch(path: string, init?: RequestInit & { token?: string; json?: unknown }): Promise<Response>;
  close(): Promise<void>;
}

export interface TestApiOptions {
  /** The API's logger; a silent one by default (tests that read the logs pass their own). */
  logger?: Logger;
}

/** A real API on a free port over a fresh test database, with a controllable clock. */
export async function startTestApi(
  overrides: Partial<Record<keyof Config, string>> = {},
  options: TestApiOptions = {},
): Promise<TestApi> {
  const db = await createTestDatabase();
  const config = testConfig({ DATABASE_URL: db.url, ...overrides });
  const clock = testClock();
  const logger = options.logger ?? pino({ level: 'silent' });
  const tokens = new TokenService(await loadSigningKey(testPrivateKeyPem()), {
    issuer: config.JWT_ISSUER,
    audience: config.JWT_AUDIENCE,
    accessTtlMs: config.ACCESS_TOKEN_TTL,
    refreshTtlMs: config.REFRESH_TOKEN_TTL,
    now: clock.now,
  });
  const deps: AppDeps = {
    config,
    knex: db.knex,
    logger,
    tokens,
    // a key of its own per test API, unless the test gives one (to share it with a dispatcher
    // process); tests open stored secrets through `api.deps.secrets`
    secrets: createSecretBox(
      config.SECRET_ENCRYPTION_KEY ? parseSecretKey(config.SECRET_ENCRYPTION_KEY) : randomBytes(32),
    ),
    now: clock.now,
    operations: new OperationRunner({
      knex: db.knex,
      logger,
      now: clock.now,
      batchSize: config.WEBHOOK_OPERATION_BATCH,
      leaseMs: config.WEBHOOK_OPERATION_LEASE,
      pollMs: 0,
    }),
  };
  const server: Server = createApp(deps).listen(0, '127.0.0.1');
  await new Promise((resolve) => server.once('listening', resolve));
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return {
    db,
    deps,
    clock,
    url,
    fetch: async (path, init = {}) => {
      const { token, json, headers, ...rest } = init;
      const allHeaders = new Headers(headers);
      if (token) allHeaders.set('authorization', `Bearer ${token}`);
      if (json !== undefined) allHeaders.set('content-type', 'application/json');
      const response = await fetch(`${url}${path}`, {
        ...rest,
        headers: allHeaders,
        body: json !== undefined ? JSON.stringify(json) : rest.body,
      });
      recordStatus(rest.method ?? 'GET', path, response.status);
      return response;
    },
    close: async () => {
      await deps.operations.stop();
      server.closeAllConnections();
      await new Promise((resolve) => server.close(resolve));
      await db.drop();
    },
  };
}

export const TEST_PASSWORD = 'Test-Password-1!';
let cachedHash: Promise<string> | undefined;

/** Inserts a party; overrides win. */
export async function buildParty(
  deps: Pick<AppDeps, 'knex'>,
  overrides: {
    type: PartyType;
    name?: string;
    managedByPartyId?: number | null;
    conferenceEnabled?: boolean;
  },
): Promise<{ id: number; type: PartyType; name: string }> {
  const [row] = await deps
    .knex('parties')
    .insert({
      type: overrides.type,
      name: overrides.name ?? `Party ${Math.random().toString(36).slice(2, 8)}`,
      managed_by_party_id: overrides.managedByPartyId ?? null,
      conference_enabled: overrides.conferenceEnabled ?? false,
      ...(await newPartyPlacement(deps.knex, overrides.managedByPartyId)),
    })
    .returning(['id', 'type', 'name']);
  return row;
}

/** Inserts an account group holding `permissions` ('all' for the whole catalog). */
export async function buildGroup(
  deps: Pick<AppDeps, 'knex'>,
  partyId: number,
  permissions: PermissionName[] | 'all' = 'all',
): Promise<number> {
  const [group] = await deps
    .knex('account_groups')
    .insert({ party_id: partyId, name: 'Group' })
    .returning('id');
  const ids =
    permissions === 'all' ? PERMISSIONS.map((p) => p.id) : permissions.map((n) => permissionByName(n).id);
  if (ids.length) {
    await deps
      .knex('account_group_permissions')
      .insert(ids.map((id) => ({ group_id: group.id, permission_id: id })));
  }
  return group.id;
}

/** Inserts an account (password TEST_PASSWORD) in a party, with a group of `permissions`. */
export async function buildAccount(
  deps: Pick<AppDeps, 'knex'>,
  overrides: {
    partyId: number;
    email?: string;
    permissions?: PermissionName[] | 'all';
    groupId?: number;
    mustChangePassword?: boolean;
  },
): Promise<{ id: number; email: string; partyId: number; groupId: number }> {
  cachedHash ??= hashPassword(TEST_PASSWORD);
  const groupId =
    overrides.groupId ?? (await buildGroup(deps, overrides.partyId, overrides.permissions ?? 'all'));
  const email = overrides.email ?? `user-${Math.random().toString(36).slice(2, 10)}@example.com`;
  const [row] = await deps
    .knex('accounts')
    .insert({
      party_id: overrides.partyId,
      group_id: groupId,
      email,
      password_hash: await cachedHash,
      must_change_password: overrides.mustChangePassword ?? false,
    })
    .returning(['id']);
  return { id: row.id, email, partyId: overrides.partyId, groupId };
}

/** Logs in through the API and returns its tokens. */
export async function login(api: TestApi, email: string, password = TEST_PASSWORD) {
  const response = await api.fetch('/api/auth/login', { method: 'POST', json: { email, password } });
  if (response.status !== 200)
    throw new Error(`login of ${email} failed: ${response.status} ${await response.text()}`);
  return (await response.json()) as { accessToken: string; refreshToken: string };
}

/**
 * Enrols the account of `accessToken` in multi-factor authentication through the API and confirms
 * it with the current code (asserting a 200): its TOTP secret and recovery codes.
 */
export async function enrolMfa(
  api: TestApi,
  accessToken: string,
): Promise<{ secret: string; recoveryCodes: string[] }> {
  const enrolment = await api.fetch('/api/accounts/myself/mfa', { method: 'POST', token: accessToken });
  const { secret } = (await enrolment.json()) as { secret: string };
  const confirmed = await api.fetch('/api/accounts/myself/mfa/confirm', {
    method: 'POST',
    token: accessToken,
    json: { code: totp(base32Decode(secret), api.clock.now()) },
  });
  expect(confirmed.status, await confirmed.clone().text()).toBe(200);
  return { secret, ...((await confirmed.json()) as { recoveryCodes: string[] }) };
}

/** One party of the test world with an account holding every permission and one holding none. */
export interface WorldParty {
  id: number;
  type: PartyType;
  name: string;
  /** Every permission. */
  full: { id: number; email: string; token: string };
  /** No permission at all. */
  bare: { id: number; email: string; token: string };
}

/**
 * A party of every type, logged in. `pmc` manages `contractor`, `user` and `broker`; `otherPmc`
 * manages `otherUser`; Admin, PoolManager, Insurer stand alone. So for a caller in `pmc`, ids of
 * `otherPmc` and `otherUser` are out of scope.
 */
export interface World {
  admin: WorldParty;
  pmc: WorldParty;
  contractor: WorldParty;
  user: WorldParty;
  broker: WorldParty;
  poolManager: WorldParty;
  insurer: WorldParty;
  otherPmc: WorldParty;
  otherUser: WorldParty;
}

async function worldParty(
  api: TestApi,
  type: PartyType,
  managedByPartyId: number | null = null,
): Promise<WorldParty> {
  const party = await buildParty(api.deps, { type, managedByPartyId });
  const full = await buildAccount(api.deps, { partyId: party.id, permissions: 'all' });
  const bare = await buildAccount(api.deps, { partyId: party.id, permissions: [] });
  const [fullTokens, bareTokens] = await Promise.all([login(api, full.email), login(api, bare.email)]);
  return {
    id: party.id,
    type,
    name: party.name,
    full: { id: full.id, email: full.email, token: fullTokens.accessToken },
    bare: { id: bare.id, email: bare.email, token: bareTokens.accessToken },
  };
}

/** Builds the World; tokens live 15 minutes of the test clock. */
export async function buildWorld(api: TestApi): Promise<World> {
  const admin = await worldParty(api, 1);
  const pmc = await worldParty(api, 2);
  const otherPmc = await worldParty(api, 2);
  return {
    admin,
    pmc,
    otherPmc,
    contractor: await worldParty(api, 5, pmc.id),
    user: await worldParty(api, 7, pmc.id),
    broker: await worldParty(api, 13, pmc.id),
    poolManager: await worldParty(api, 3),
    insurer: await worldParty(api, 14),
    otherUser: await worldParty(api, 7, otherPmc.id),
  };
}

export interface UseTestApiOptions extends TestApiOptions {
  /** Configuration the test changes (`startTestApi`'s overrides). */
  config?: Partial<Record<keyof Config, string>>;
  /** Builds the standard `World` too. */
  world?: boolean;
  /** Empties the webhook tables (`truncateWebhooks`) before each test. */
  truncateWebhooks?: boolean;
}

/**
 * The setup of an API test, in one call at the top of a file or a `describe`: `beforeAll` starts a
 * test API over a fresh database (and builds the `World` when asked), `afterAll` closes it;
 * `truncateWebhooks` empties the webhook tables before each test. The
 * answered `api` and `world` are usable in the tests and hooks that follow: `api` forwards to the
 * API once started, `world` is filled in when built.
 */
export function useTestApi(options: UseTestApiOptions & { world: true }): { api: TestApi; world: World };
export function useTestApi(options?: UseTestApiOptions): { api: TestApi };
export function useTestApi(options: UseTestApiOptions = {}): { api: TestApi; world?: World } {
  const { config, world: withWorld, truncateWebhooks: truncateEach, ...apiOptions } = options;
  let started: TestApi | undefined;
  const current = (): TestApi => {
    if (!started) throw new Error('useTestApi: the API starts in beforeAll; use it in a test or a hook');
    return started;
  };
  const api: TestApi = {
    get db() {
      return current().db;
    },
    get deps() {
      return current().deps;
    },
    get clock() {
      return current().clock;
    },
    get url() {
      return current().url;
    },
    fetch: (path, init) => current().fetch(path, init),
    close: () => current().close(),
  };
  const world = {} as World;
  beforeAll(async () => {
    started = await startTestApi(config, apiOptions);
    if (withWorld) Object.assign(world, await buildWorld(started));
  });
  afterAll(async () => {
    await started?.close();
  });
  if (truncateEach) beforeEach(() => truncateWebhooks(current().db.knex));
  return withWorld ? { api, world } : { api };
}

/** Every world party, one per party type (the `other*` parties excluded). */
export function partiesByType(world: World): WorldParty[] {
  return [
    world.admin,
    world.pmc,
    world.poolManager,
    world.contractor,
    world.user,
    world.broker,
    world.insurer,
  ];
}

export interface AccessCase {
  method: 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE';
  /** The path, or a function of the caller's world party (to aim at an in-scope id). */
  path: string | ((caller: WorldParty) => string | Promise<string>);
  /** A valid body, or a function of the caller (called once per request: creates need fresh data). */
  body?: unknown | ((caller: WorldParty) => unknown);
  allow: readonly PartyType[];
  permission?: PermissionName;
}

/**
 * Asserts the access rules of one operation: every allowed party type (with every permission)
 * gets past the guards, every other type gets a 403 ProblemDetails, and, when the operation names
 * a permission, an allowed non-User caller without it gets a 403 while a User (7) is not checked.
 * "Gets past the guards" = any status but 401/403 (the call may still be a 404 for ids it does
 * not see; the per-operation tests assert the success cases).
 */
export async function expectAccessRules(api: TestApi, world: World, rule: AccessCase): Promise<void> {
  const call = async (caller: WorldParty, token: string) => {
    const path = typeof rule.path === 'function' ? await rule.path(caller) : rule.path;
    const body =
      typeof rule.body === 'function' ? (rule.body as (c: WorldParty) => unknown)(caller) : rule.body;
    const response = await api.fetch(path, {
      method: rule.method,
      token,
      ...(body === undefined ? {} : { json: body }),
    });
    return { path, response };
  };
  for (const party of partiesByType(world)) {
    const { path, response } = await call(party, party.full.token);
    const label = `${rule.method} ${path} as party type ${party.type}`;
    if (rule.allow.includes(party.type)) {
      if ([401, 403].includes(response.status)) {
        throw new Error(
          `${label}: expected to pass the guards, got ${response.status} ${await response.text()}`,
        );
      }
    } else if (response.status !== 403) {
      throw new Error(`${label}: expected 403, got ${response.status} ${await response.text()}`);
    } else if (!(response.headers.get('content-type') ?? '').includes('application/problem+json')) {
      throw new Error(`${label}: a 403 must be ProblemDetails`);
    }
    await response.body?.cancel();
    if (!rule.permission || !rule.allow.includes(party.type)) continue;
    const bare = await call(party, party.bare.token);
    const bareLabel = `${rule.method} ${bare.path} as party type ${party.type} without ${rule.permission}`;
    if (party.type === 7) {
      if ([401, 403].includes(bare.response.status))
        throw new Error(`${bareLabel}: Users skip permission checks, got ${bare.response.status}`);
    } else if (bare.response.status !== 403) {
      throw new Error(`${bareLabel}: expected 403, got ${bare.response.status}`);
    }
    await bare.response.body?.cancel();
  }
}
