import {
  generatePrivateKeyPem,
  loadSigningKey,
  WEBHOOK_TOKEN_TTL_MS,
  type SigningKey,
} from '@platform/crypto';
import { newPartyPlacement } from '@platform/db';
import { createTestDatabase, type TestDatabase } from '@platform/testkit';
import { decodePermissions, permissionByName, TokenScope } from '@platform/shared';
import { createLocalJWKSet, decodeProtectedHeader, jwtVerify } from 'jose';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadConfig as loadApiConfig } from '../../api/src/config';
import { loadConfig } from './config';
import { createWebhookTokenSource, WEBHOOK_TOKEN_RENEW_BEFORE_MS } from '@platform/delivery';

const ISSUER = 'https://issuer.test';
const AUDIENCE = 'audience-test';

let db: TestDatabase;
let key: SigningKey;
let party: { id: number; name: string; type: number };

/** A token source on a clock the test moves, counting the party reads it makes. */
function source(start = new Date('2026-03-01T10:00:00Z')) {
  let now = start.getTime();
  let partyReads = 0;
  db.knex.on('query', (query: { sql: string }) => {
    if (/from "parties"/.test(query.sql)) partyReads++;
  });
  const tokens = createWebhookTokenSource({
    knex: db.knex,
    key,
    issuer: ISSUER,
    audience: AUDIENCE,
    now: () => new Date(now),
  });
  return {
    tokens,
    advance: (ms: number) => (now += ms),
    now: () => new Date(now),
    partyReads: () => partyReads,
  };
}

const verify = (token: string, currentDate: Date) =>
  jwtVerify(token, createLocalJWKSet({ keys: [key.publicJwk] }), {
    issuer: ISSUER,
    audience: AUDIENCE,
    algorithms: ['RS256'],
    currentDate,
  });

beforeAll(async () => {
  db = await createTestDatabase();
  key = await loadSigningKey(generatePrivateKeyPem());
  const [row] = await db
    .knex('parties')
    .insert({ type: 2, name: 'Hausverwaltung Nord', ...(await newPartyPlacement(db.knex, null)) })
    .returning(['id', 'name', 'type']);
  party = row!;
});
afterAll(() => db.drop());

describe('the webhook bearer token source', () => {
  it('signs an RS256 token of scope webhook for the registration’s party, valid 30 minutes, verifiable with the JWKS', async () => {
    const clock = source();
    const token = await clock.tokens({ id: 41, partyId: party.id });
    expect(decodeProtectedHeader(token)).toEqual({ alg: 'RS256', typ: 'JWT', kid: key.kid });
    const { payload } = await verify(token, clock.now());
    const iat = Math.floor(clock.now().getTime() / 1000);
    expect(payload).toEqual({
      sub: 'webhook-registration:41',
      partyId: String(party.id),
      partyName: 'Hausverwaltung Nord',
      accountRole: '2',
      scope: TokenScope.Webhook,
      permissions: expect.any(String),
      iss: ISSUER,
      aud: AUDIENCE,
      iat,
      exp: iat + 30 * 60,
    });
    const permissions = decodePermissions(payload.permissions as string);
    expect(permissions.has(permissionByName('Property.Read').id)).toBe(true);
    expect(permissions.has(permissionByName('Party.Read').id)).toBe(true);
    for (const name of ['Property.Create', 'Property.Update', 'Account.Read', 'Webhook.Read'] as const) {
      expect(permissions.has(permissionByName(name).id), name).toBe(false);
    }
    // expired after its 30 minutes
    await expect(
      verify(token, new Date(clock.now().getTime() + WEBHOOK_TOKEN_TTL_MS + 1000)),
    ).rejects.toThrow(/exp/);
  });

  it('reuses one token per registration until 5 minutes before it expires', async () => {
    const clock = source();
    const first = await clock.tokens({ id: 1, partyId: party.id });
    const reads = clock.partyReads();
    // later deliveries get the very token (a new one would carry a later iat)
    clock.advance(10 * 60_000);
    expect(await clock.tokens({ id: 1, partyId: party.id })).toBe(first);
    clock.advance(WEBHOOK_TOKEN_TTL_MS - WEBHOOK_TOKEN_RENEW_BEFORE_MS - 10 * 60_000 - 1000);
    expect(await clock.tokens({ id: 1, partyId: party.id })).toBe(first);
    expect(clock.partyReads()).toBe(reads);
    // within the last 5 minutes a new one is signed, valid 30 minutes from now
    clock.advance(1000);
    const renewed = await clock.tokens({ id: 1, partyId: party.id });
    expect(renewed).not.toBe(first);
    const { payload } = await verify(renewed, clock.now());
    expect(payload.iat).toBe(Math.floor(clock.now().getTime() / 1000));
    // another registration has a token of its own
    const other = await clock.tokens({ id: 2, partyId: party.id });
    expect((await verify(other, clock.now())).payload.sub).toBe('webhook-registration:2');
  });

  it('signs once for concurrent deliveries of one registration', async () => {
    const clock = source();
    const before = clock.partyReads();
    const tokens = await Promise.all(
      Array.from({ length: 20 }, () => clock.tokens({ id: 7, partyId: party.id })),
    );
    expect(new Set(tokens).size).toBe(1);
    expect(clock.partyReads() - before).toBe(1);
  });

  it('does not keep a failure: the next delivery tries again', async () => {
    const clock = source();
    await expect(clock.tokens({ id: 9, partyId: 2_000_000_000 })).rejects.toThrow(/party 2000000000/);
    const reads = clock.partyReads();
    await expect(clock.tokens({ id: 9, partyId: 2_000_000_000 })).rejects.toThrow(/not found/);
    expect(clock.partyReads()).toBe(reads + 1);
  });

  it('signs with the issuer and audience the API checks, by default and when configured', () => {
    const env = { DATABASE_URL: 'postgres://localhost/x' };
    const dispatcher = loadConfig(env);
    const api = loadApiConfig(env);
    expect([dispatcher.JWT_ISSUER, dispatcher.JWT_AUDIENCE]).toEqual([api.JWT_ISSUER, api.JWT_AUDIENCE]);
    const custom = { ...env, JWT_ISSUER: 'https://id.example.org', JWT_AUDIENCE: 'gen2' };
    expect(loadConfig(custom)).toMatchObject({ JWT_ISSUER: 'https://id.example.org', JWT_AUDIENCE: 'gen2' });
  });
});
