import type { AddressInfo } from 'node:net';
import type { Server } from 'node:http';
import { createTestDatabase, type TestDatabase } from '@platform/db/testing';
import { PERMISSIONS, type PartyType, type PermissionName, permissionByName } from '@platform/shared';
import pino from 'pino';
import { createApp } from './app';
import { generatePrivateKeyPem, loadSigningKey } from './auth/keys';
import { hashPassword } from './auth/passwords';
import { TokenService } from './auth/tokens';
import { testConfig, type Config } from './config';
import type { AppDeps } from './deps';

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

/** A real API on a free port over a fresh test database, with a controllable clock. */
export async function startTestApi(overrides: Partial<Record<keyof Config, string>> = {}): Promise<TestApi> {
  const db = await createTestDatabase();
  const config = testConfig({ DATABASE_URL: db.url, ...overrides });
  const clock = testClock();
  const tokens = new TokenService(await loadSigningKey(testPrivateKeyPem()), {
    issuer: config.JWT_ISSUER,
    audience: config.JWT_AUDIENCE,
    accessTtlMs: config.ACCESS_TOKEN_TTL,
    refreshTtlMs: config.REFRESH_TOKEN_TTL,
    now: clock.now,
  });
  const deps: AppDeps = { config, knex: db.knex, logger: pino({ level: 'silent' }), tokens, now: clock.now };
  const server: Server = createApp(deps).listen(0, '127.0.0.1');
  await new Promise((resolve) => server.once('listening', resolve));
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return {
    db,
    deps,
    clock,
    url,
    fetch: (path, init = {}) => {
      const { token, json, headers, ...rest } = init;
      const allHeaders = new Headers(headers);
      if (token) allHeaders.set('authorization', `Bearer ${token}`);
      if (json !== undefined) allHeaders.set('content-type', 'application/json');
      return fetch(`${url}${path}`, {
        ...rest,
        headers: allHeaders,
        body: json !== undefined ? JSON.stringify(json) : rest.body,
      });
    },
    close: async () => {
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
