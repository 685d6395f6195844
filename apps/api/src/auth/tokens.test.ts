import { createPublicKey } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import {
  generatePrivateKeyPem,
  loadSigningKey,
  resolvePrivateKeyPem,
  type SigningKey,
} from '@platform/crypto';
import { encodePermissions, PartyType, permissionByName } from '@platform/shared';
import {
  base64url,
  calculateJwkThumbprint,
  createRemoteJWKSet,
  decodeJwt,
  decodeProtectedHeader,
  jwtVerify,
  SignJWT,
  UnsecuredJWT,
  type JWTPayload,
} from 'jose';
import { beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { buildAccount, buildParty, login, testPrivateKeyPem, useTestApi } from '../../tests/support/api';
import { TokenService } from './tokens';

const MINUTE = 60_000;
const PROTECTED = '/api/accounts/myself';
/** Every claim an access token carries. */
const ACCESS_TOKEN_CLAIMS = [
  'sub',
  'partyId',
  'partyName',
  'accountRole',
  'email',
  'scope',
  'permissions',
  'telemetry',
  'iat',
  'exp',
  'iss',
  'aud',
] as const;

const { api } = useTestApi();
let apiKey: SigningKey;
let account: { id: number; email: string; partyId: number };
let party: { id: number; name: string };
/** The claims of a real access token of `account`, as a template for minted ones. */
let claims: JWTPayload;

beforeAll(async () => {
  apiKey = await loadSigningKey(testPrivateKeyPem());
  party = await buildParty(api.deps, { type: PartyType.PropertyManagementCompany, name: 'Acme Estates' });
  account = await buildAccount(api.deps, {
    partyId: party.id,
    permissions: ['Account.Read', 'Party.Read'],
  });
  claims = decodeJwt((await login(api, account.email)).accessToken);
});
beforeEach(async () => {
  api.clock.set(new Date());
  await api.deps.knex('rate_limit_hits').del();
});

const nowSeconds = () => Math.floor(api.clock.now().getTime() / 1000);

/** A token of `payload` (iat, exp, iss, aud included) signed RS256 by `key` (the API's by default). */
function mint(
  payload: JWTPayload,
  options: { key?: SigningKey; header?: Record<string, unknown> } = {},
): Promise<string> {
  const key = options.key ?? apiKey;
  return new SignJWT(payload)
    .setProtectedHeader({ alg: 'RS256', typ: 'JWT', kid: apiKey.kid, ...options.header })
    .sign(key.privateKey);
}

/** A fresh, valid set of access claims at the test clock's now; `changes` win, `undefined` removes. */
function accessClaims(changes: Record<string, unknown> = {}): JWTPayload {
  const iat = nowSeconds();
  const payload: Record<string, unknown> = { ...claims, iat, exp: iat + 15 * 60, ...changes };
  for (const [name, value] of Object.entries(payload)) if (value === undefined) delete payload[name];
  return payload;
}

async function call(token: string | undefined, headers: Record<string, string> = {}) {
  return api.fetch(PROTECTED, { token, headers });
}

/** The API's answer to a refused token: 401, no body, `WWW-Authenticate: Bearer …`. */
async function expectRefused(response: Response) {
  expect(response.status).toBe(401);
  expect(response.headers.get('www-authenticate')).toMatch(/^Bearer /);
  expect(response.headers.get('content-type')).toBeNull();
  expect(await response.text()).toBe('');
}

describe('the access token', () => {
  it('has the header RS256 / JWT and a kid published in the JWKS', async () => {
    const { accessToken } = await login(api, account.email);
    const header = decodeProtectedHeader(accessToken);
    expect(header).toEqual({ alg: 'RS256', typ: 'JWT', kid: expect.any(String) });
    const jwks = (await (await api.fetch('/.well-known/jwks.json')).json()) as { keys: { kid: string }[] };
    expect(jwks.keys.map((k) => k.kid)).toContain(header.kid);
  });

  it('carries exactly the claims of docs/api.md#access-tokens and lives 15 minutes', async () => {
    const { accessToken } = await login(api, account.email);
    const payload = decodeJwt(accessToken);
    expect(Object.keys(payload).sort()).toEqual([...ACCESS_TOKEN_CLAIMS].sort());
    expect(payload).toMatchObject({
      sub: String(account.id),
      partyId: String(party.id),
      partyName: 'Acme Estates',
      accountRole: String(PartyType.PropertyManagementCompany),
      email: account.email,
      scope: 'platform',
      permissions: encodePermissions([
        permissionByName('Account.Read').id,
        permissionByName('Party.Read').id,
      ]),
      iss: api.deps.config.JWT_ISSUER,
      aud: api.deps.config.JWT_AUDIENCE,
      iat: nowSeconds(),
    });
    expect(JSON.parse(payload.telemetry as string)).toEqual({ UnitCount: 0, ProcessCount: 0 });
    expect(payload.exp! - payload.iat!).toBe(15 * 60);
  });

  it('verifies with a stock jose remote JWKS, as any client would', async () => {
    const { accessToken } = await login(api, account.email);
    const jwks = createRemoteJWKSet(new URL(`${api.url}/.well-known/jwks.json`));
    const { payload, protectedHeader } = await jwtVerify(accessToken, jwks, {
      issuer: api.deps.config.JWT_ISSUER,
      audience: api.deps.config.JWT_AUDIENCE,
      algorithms: ['RS256'],
      typ: 'JWT',
    });
    expect(protectedHeader.alg).toBe('RS256');
    expect(payload.sub).toBe(String(account.id));
  });

  it('is published as a public key only', async () => {
    const response = await api.fetch('/.well-known/jwks.json');
    expect(response.status).toBe(200);
    expect(response.headers.get('content-type')).toMatch(/^application\/json/);
    const { keys } = (await response.json()) as { keys: Record<string, unknown>[] };
    expect(keys).toHaveLength(1);
    expect(keys[0]).toMatchObject({ kty: 'RSA', alg: 'RS256', use: 'sig', kid: apiKey.kid });
    for (const secret of ['d', 'p', 'q', 'dp', 'dq', 'qi', 'k']) expect(keys[0]).not.toHaveProperty(secret);
  });

  it('opens the API while valid, with the Bearer scheme in any case', async () => {
    const { accessToken } = await login(api, account.email);
    expect((await call(accessToken)).status).toBe(200);
    expect((await call(undefined, { authorization: `bearer ${accessToken}` })).status).toBe(200);
    // a token minted with the API's key and the same claims is just as good: the refusals below
    // differ from it in one respect each
    expect((await call(await mint(accessClaims()))).status).toBe(200);
  });
});

describe('a refused token answers 401 with no body and WWW-Authenticate', () => {
  it('when there is none, or another scheme', async () => {
    const { accessToken } = await login(api, account.email);
    await expectRefused(await call(undefined));
    await expectRefused(await call(undefined, { authorization: `Basic ${btoa('a:b')}` }));
    await expectRefused(await call(undefined, { authorization: accessToken }));
    await expectRefused(await call(undefined, { authorization: 'Bearer' }));
  });

  it('when it has expired (15 minutes after issue)', async () => {
    const { accessToken } = await login(api, account.email);
    api.clock.advance(15 * MINUTE - 1000);
    expect((await call(accessToken)).status).toBe(200);
    api.clock.advance(1000);
    await expectRefused(await call(accessToken));
  });

  it('when it is not yet valid: issued in the future', async () => {
    for (const ahead of [60, 3600]) {
      const iat = nowSeconds() + ahead;
      await expectRefused(await call(await mint(accessClaims({ iat, exp: iat + 15 * 60 }))));
    }
    // a few seconds of clock skew between replicas are tolerated
    const iat = nowSeconds() + 2;
    expect((await call(await mint(accessClaims({ iat, exp: iat + 15 * 60 })))).status).toBe(200);
  });

  it('when it is not yet valid: nbf in the future', async () => {
    await expectRefused(await call(await mint(accessClaims({ nbf: nowSeconds() + 60 }))));
  });

  it('when it claims a longer life than an access token has', async () => {
    await expectRefused(await call(await mint(accessClaims({ exp: nowSeconds() + 15 * 60 + 1 }))));
    await expectRefused(await call(await mint(accessClaims({ exp: nowSeconds() + 365 * 24 * 3600 }))));
    // a refresh token's lifetime does not make an access token
    const { refreshToken } = await login(api, account.email);
    expect(await api.deps.tokens.verifyRefreshToken(refreshToken)).toBeDefined();
  });

  it('when it is malformed', async () => {
    const { accessToken } = await login(api, account.email);
    for (const token of [
      'garbage',
      'a.b.c',
      'a.b',
      `${accessToken}.x`,
      `${accessToken.split('.')[0]}..${accessToken.split('.')[2]}`,
      `${accessToken}x`,
      `${accessToken} ${accessToken}`,
      Buffer.from(accessToken).toString('base64'),
    ]) {
      await expectRefused(await call(token));
    }
  });

  it('when its signature is truncated or altered', async () => {
    const { accessToken } = await login(api, account.email);
    const [header, payload, signature] = accessToken.split('.') as [string, string, string];
    await expectRefused(await call(accessToken.slice(0, -10)));
    await expectRefused(await call(`${header}.${payload}.`));
    const flipped = (signature[5] === 'A' ? 'B' : 'A') as string;
    await expectRefused(
      await call(`${header}.${payload}.${signature.slice(0, 5)}${flipped}${signature.slice(6)}`),
    );
  });

  it('when its payload was altered (an escalated party type)', async () => {
    const { accessToken } = await login(api, account.email);
    const [header, , signature] = accessToken.split('.') as [string, string, string];
    const escalated = base64url.encode(JSON.stringify({ ...decodeJwt(accessToken), accountRole: '1' }));
    await expectRefused(await call(`${header}.${escalated}.${signature}`));
  });

  it('when another RSA key signed it, even under the API’s kid', async () => {
    const otherKey = await loadSigningKey(generatePrivateKeyPem());
    await expectRefused(await call(await mint(accessClaims(), { key: otherKey })));
    await expectRefused(
      await call(await mint(accessClaims(), { key: otherKey, header: { kid: otherKey.kid } })),
    );
  });

  it('when it is unsigned (alg none)', async () => {
    const unsigned = new UnsecuredJWT(accessClaims()).encode();
    expect(decodeProtectedHeader(unsigned).alg).toBe('none');
    await expectRefused(await call(unsigned));
    // the same, with a typ and kid
    const header = base64url.encode(JSON.stringify({ alg: 'none', typ: 'JWT', kid: apiKey.kid }));
    const payload = base64url.encode(JSON.stringify(accessClaims()));
    await expectRefused(await call(`${header}.${payload}.`));
  });

  it('when it is HS256-signed with the public key as the secret (algorithm confusion)', async () => {
    const publicPem = createPublicKey(testPrivateKeyPem()).export({ type: 'spki', format: 'pem' }).toString();
    for (const secret of [publicPem, JSON.stringify(apiKey.publicJwk)]) {
      const token = await new SignJWT(accessClaims())
        .setProtectedHeader({ alg: 'HS256', typ: 'JWT', kid: apiKey.kid })
        .sign(new TextEncoder().encode(secret));
      await expectRefused(await call(token));
    }
  });

  it('when its audience or issuer is another’s', async () => {
    await expectRefused(await call(await mint(accessClaims({ aud: 'someone-else' }))));
    await expectRefused(await call(await mint(accessClaims({ aud: ['someone-else'] }))));
    await expectRefused(await call(await mint(accessClaims({ iss: 'https://evil.example.com' }))));
  });

  it('when it is a Gen1 token (docs/gen1-to-gen2.md#tokens-one-account-two-kinds-of-token)', async () => {
    await expectRefused(await call(await mint(accessClaims({ aud: 'platform-api-gen1' }))));
  });

  it('when it is a refresh token', async () => {
    const { refreshToken } = await login(api, account.email);
    await expectRefused(await call(refreshToken));
  });

  it.each(ACCESS_TOKEN_CLAIMS)('when the claim %s is missing', async (claim) => {
    await expectRefused(await call(await mint(accessClaims({ [claim]: undefined }))));
  });

  it.each<[string, unknown]>([
    ['accountRole', '4'],
    ['accountRole', '0'],
    ['accountRole', ''],
    ['accountRole', 'Admin'],
    ['accountRole', PartyType.Admin],
    ['accountRole', [1]],
    ['accountRole', ' 1'],
    ['scope', 'admin'],
    ['scope', 'Platform'],
    ['scope', ['platform']],
    ['sub', ''],
    ['sub', '0'],
    ['sub', 'abc'],
    ['sub', '1.0'],
    ['sub', '1e3'],
    ['sub', '99999999999'],
    ['partyId', null],
    ['partyId', ''],
    ['partyId', 1],
    ['partyId', '-1'],
    ['email', 42],
    ['partyName', null],
    ['permissions', 7],
    ['telemetry', { UnitCount: 0, ProcessCount: 0 }],
    ['exp', 'tomorrow'],
    ['iat', 'now'],
  ])('when the claim %s is invalid: %j', async (claim, value) => {
    await expectRefused(await call(await mint(accessClaims({ [claim]: value }))));
  });
});

describe('TokenService', () => {
  it('keeps the kinds apart: an access token is no refresh token and the reverse', async () => {
    const { accessToken, refreshToken } = await login(api, account.email);
    const tokens = api.deps.tokens;
    expect(await tokens.verifyAccessToken(accessToken)).toMatchObject({
      accountId: account.id,
      partyId: party.id,
      partyType: PartyType.PropertyManagementCompany,
      scope: 'platform',
    });
    expect(await tokens.verifyRefreshToken(accessToken)).toBeUndefined();
    expect(await tokens.verifyAccessToken(refreshToken)).toBeUndefined();
    expect(await tokens.verifyRefreshToken(refreshToken)).toMatchObject({ accountId: account.id });
  });

  it('refuses a refresh token whose jti or family is no uuid, or whose subject is no id', async () => {
    const { refreshToken } = await login(api, account.email);
    const valid = decodeJwt(refreshToken);
    expect(await api.deps.tokens.verifyRefreshToken(await mint(valid))).toBeDefined();
    for (const changes of [{ jti: 'not-a-uuid' }, { fam: 'x' }, { fam: 7 }, { sub: '' }, { sub: '1.5' }]) {
      expect(await api.deps.tokens.verifyRefreshToken(await mint({ ...valid, ...changes }))).toBeUndefined();
    }
  });

  it('signs with the clock it is given', async () => {
    const at = new Date('2030-01-01T00:00:00Z');
    const tokens = new TokenService(apiKey, {
      issuer: 'iss',
      audience: 'aud',
      accessTtlMs: 15 * MINUTE,
      refreshTtlMs: 60 * MINUTE,
      now: () => at,
    });
    const token = await tokens.signAccessToken({
      accountId: 1,
      partyId: 2,
      partyName: 'P',
      partyType: PartyType.User,
      email: 'u@example.com',
      scope: 'platform',
      permissions: encodePermissions([]),
      telemetry: { UnitCount: 3, ProcessCount: 4 },
    });
    expect(decodeJwt(token)).toMatchObject({ iat: at.getTime() / 1000, exp: at.getTime() / 1000 + 900 });
    expect(await tokens.verifyAccessToken(token)).toMatchObject({ accountId: 1, partyType: PartyType.User });
    const refresh = await tokens.signRefreshToken(1, crypto.randomUUID());
    expect(refresh.expiresAt).toEqual(new Date(at.getTime() + 60 * MINUTE));
  });
});

describe('signing keys', () => {
  it('names the key by its RFC 7638 thumbprint and publishes no private part', async () => {
    const key = await loadSigningKey(testPrivateKeyPem());
    expect(key.kid).toBe(await calculateJwkThumbprint(key.publicJwk));
    expect(Object.keys(key.publicJwk).sort()).toEqual(['alg', 'e', 'kid', 'kty', 'n', 'use']);
    expect((await loadSigningKey(generatePrivateKeyPem())).kid).not.toBe(key.kid);
  });

  it('takes the PEM from the variable (with escaped newlines), else the file, else makes one', () => {
    const dir = mkdtempSync(join(tmpdir(), 'keys-'));
    try {
      const file = join(dir, 'sub', 'jwt.pem');
      const pem = testPrivateKeyPem();
      expect(resolvePrivateKeyPem({ pem: pem.replace(/\n/g, '\\n'), file, production: true })).toBe(pem);
      expect(() => resolvePrivateKeyPem({ file, production: true })).toThrow(/production/);
      const made = resolvePrivateKeyPem({ file, production: false });
      expect(made).toMatch(/^-----BEGIN PRIVATE KEY-----/);
      expect(readFileSync(file, 'utf8')).toBe(made);
      expect(statSync(file).mode & 0o077).toBe(0);
      expect(resolvePrivateKeyPem({ file, production: true })).toBe(made);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
