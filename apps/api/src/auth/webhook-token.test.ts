import {
  loadSigningKey,
  signWebhookToken,
  webhookTokenSubject,
  WEBHOOK_TOKEN_TTL_MS,
  type SigningKey,
} from '@platform/crypto';
import {
  encodePermissions,
  PERMISSIONS,
  permissionByName,
  TokenScope,
  type PartyType,
} from '@platform/shared';
import { SignJWT } from 'jose';
import { beforeAll, describe, expect, it } from 'vitest';
import { expectProblem, expectUnauthenticated } from '../../tests/support/http';
import { testPrivateKeyPem, type WorldParty, useTestApi } from '../../tests/support/api';
import { createProperty, register } from '../../tests/support/webhooks';

// The API's side of the service-signed webhook bearer token (docs/dispatcher.md#what-the-api-lets-the-token-do): it reads the data of the
// registration's party and nothing else, and is refused on every write and account route.

const { api, world } = useTestApi({ world: true });
let key: SigningKey;
/** Properties by owner: the PMC's own, one of a party it manages, and one of another PMC. */
const properties = { pmc: 0, managed: 0, other: 0, admin: 0 };
let registrationId: number;
let token: string;

const issue = async (party: WorldParty, registration: number, now = api.clock.now()) =>
  (
    await signWebhookToken(
      key,
      {
        registrationId: registration,
        partyId: party.id,
        partyName: 'Party',
        partyType: party.type as PartyType,
      },
      { issuer: api.deps.config.JWT_ISSUER, audience: api.deps.config.JWT_AUDIENCE, now },
    )
  ).token;

const get = (path: string, bearer = token) => api.fetch(path, { token: bearer });
const ids = async (response: Response) => {
  expect(response.status, await response.clone().text()).toBe(200);
  const body = (await response.json()) as { items?: { id: number }[] } | { id: number }[];
  return (Array.isArray(body) ? body : body.items!).map((item) => item.id).sort((a, b) => a - b);
};

beforeAll(async () => {
  key = await loadSigningKey(testPrivateKeyPem());
  properties.pmc = await createProperty(api, world.pmc.full.token, 'Own');
  const managed = await api.fetch('/api/properties', {
    method: 'POST',
    token: world.pmc.full.token,
    json: { partyId: world.user.id, name: 'Managed', street: 'A', postalCode: '1', city: 'B' },
  });
  expect(managed.status, await managed.clone().text()).toBe(200);
  properties.managed = ((await managed.json()) as { id: number }).id;
  properties.other = await createProperty(api, world.otherPmc.full.token, 'Other');
  properties.admin = await createProperty(api, world.admin.full.token, 'Admin');
  registrationId = (await register(api, world.pmc.full.token, { targetAuthorization: { type: 2 } })).id;
  token = await issue(world.pmc, registrationId);
});

describe('a webhook bearer token at the API', () => {
  it('reads the data of its party and of the parties it manages: list, read, search, batch', async () => {
    const mine = [properties.pmc, properties.managed].sort((a, b) => a - b);
    expect(await ids(await get('/api/properties'))).toEqual(mine);
    expect(await ids(await get(`/api/properties/${properties.pmc}`).then((r) => wrap(r)))).toEqual([
      properties.pmc,
    ]);
    const search = await api.fetch('/api/properties/search', {
      method: 'POST',
      token,
      json: { filters: [] },
    });
    expect(await ids(search)).toEqual(mine);
    const batch = await api.fetch('/api/properties/batch', {
      method: 'POST',
      token,
      json: { ids: [properties.pmc, properties.managed, properties.other, properties.admin] },
    });
    expect(await ids(batch)).toEqual(mine);
    // the Party resource too: its own party and those it manages
    expect(await ids(await get('/api/parties'))).toEqual(
      [world.pmc.id, world.contractor.id, world.user.id, world.broker.id].sort((a, b) => a - b),
    );
  });

  it('answers 404 for another party’s data', async () => {
    await expectProblem(await get(`/api/properties/${properties.other}`), 404);
    await expectProblem(await get(`/api/parties/${world.otherPmc.id}`), 404);
  });

  it('is refused with a 403 on every write, however it is permitted', async () => {
    const create = await api.fetch('/api/properties', {
      method: 'POST',
      token,
      json: { name: 'X', street: 'A', postalCode: '1', city: 'B' },
    });
    await expectProblem(create, 403, { detail: 'A token with scope "webhook" cannot call this operation' });
    const patch = await api.fetch(`/api/properties/${properties.pmc}`, {
      method: 'PATCH',
      token,
      json: { name: 'Changed' },
    });
    await expectProblem(patch, 403);
    await expectProblem(
      await api.fetch(`/api/properties/${properties.pmc}`, { method: 'DELETE', token }),
      403,
    );
    const row = await api.db.knex('properties').where({ id: properties.pmc }).first('name', 'deleted');
    expect(row).toEqual({ name: 'Own', deleted: null });
  });

  it('is refused with a 403 on account, permission and webhook routes', async () => {
    for (const path of [
      '/api/accounts',
      '/api/accounts/myself',
      `/api/accounts/${world.pmc.full.id}`,
      '/api/account-contact-details',
      '/api/account-permissions',
      '/api/webhook-registrations',
      `/api/webhook-registrations/${registrationId}`,
      '/api/webhooks',
    ]) {
      await expectProblem(await get(path), 403);
    }
  });

  it('of an Admin registration reads only the Admin party’s data, not everything', async () => {
    const adminRegistration = (
      await register(api, world.admin.full.token, { targetAuthorization: { type: 2 } })
    ).id;
    const adminToken = await issue(world.admin, adminRegistration);
    expect(await ids(await get('/api/properties', adminToken))).toEqual([properties.admin]);
    await expectProblem(await get(`/api/properties/${properties.pmc}`, adminToken), 404);
  });

  it('ends with its registration', async () => {
    const short = (await register(api, world.pmc.full.token, { targetAuthorization: { type: 3 } })).id;
    const shortToken = await issue(world.pmc, short);
    expect((await get('/api/properties', shortToken)).status).toBe(200);
    const deleted = await api.fetch(`/api/webhook-registrations/${short}`, {
      method: 'DELETE',
      token: world.pmc.full.token,
    });
    expect(deleted.status).toBe(204);
    await expectUnauthenticated(await get('/api/properties', shortToken));
    // a token naming another party than its registration's is no token of that registration
    await expectUnauthenticated(await get('/api/properties', await issue(world.otherPmc, registrationId)));
  });

  it('is valid 30 minutes, not longer', async () => {
    const issuedAt = api.clock.now();
    const fresh = await issue(world.pmc, registrationId, issuedAt);
    api.clock.advance(WEBHOOK_TOKEN_TTL_MS - 1000);
    try {
      expect((await get('/api/properties', fresh)).status).toBe(200);
      api.clock.advance(2000);
      await expectUnauthenticated(await get('/api/properties', fresh));
    } finally {
      api.clock.set(issuedAt);
    }
  });

  it('is refused when its claims are not those of a webhook token', async () => {
    const { JWT_ISSUER, JWT_AUDIENCE } = api.deps.config;
    const now = Math.floor(api.clock.now().getTime() / 1000);
    const sign = (claims: Record<string, unknown>, sub: string, lifetimeS = 1800) =>
      new SignJWT(claims)
        .setProtectedHeader({ alg: 'RS256', typ: 'JWT', kid: key.kid })
        .setSubject(sub)
        .setIssuer(JWT_ISSUER)
        .setAudience(JWT_AUDIENCE)
        .setIssuedAt(now)
        .setExpirationTime(now + lifetimeS)
        .sign(key.privateKey);
    const claims = {
      partyId: String(world.pmc.id),
      partyName: 'Party',
      accountRole: '2',
      scope: TokenScope.Webhook,
      permissions: encodePermissions([permissionByName('Property.Read').id]),
    };
    const subject = webhookTokenSubject(registrationId);
    // the well-formed one passes, so each refusal below is its one change
    expect((await get('/api/properties', await sign(claims, subject))).status).toBe(200);
    const refused = [
      await sign(claims, subject, 1801), // lives longer than 30 minutes
      await sign(claims, String(world.pmc.full.id)), // an account's sub with the webhook scope
      await sign({ ...claims, scope: TokenScope.Platform }, subject), // the webhook sub as a platform token
      await sign({ ...claims, partyId: 'x' }, subject),
      await sign({ ...claims, accountRole: '4' }, subject),
      await sign({ ...claims, permissions: undefined }, subject),
      await sign(claims, 'webhook-registration:0'),
    ];
    for (const bad of refused) await expectUnauthenticated(await get('/api/properties', bad));
    // every permission in the claim still buys no write: the scope decides first
    const everything = await sign(
      { ...claims, permissions: encodePermissions(PERMISSIONS.map((p) => p.id)) },
      subject,
    );
    const write = await api.fetch(`/api/properties/${properties.pmc}`, {
      method: 'PATCH',
      token: everything,
      json: { name: 'Changed' },
    });
    await expectProblem(write, 403);
    // and reads beyond the domain resources are not granted by the claim either
    await expectProblem(await get('/api/webhooks', everything), 403);
  });

  it('needs the read permission of the resource, which the issued token carries', async () => {
    const { JWT_ISSUER, JWT_AUDIENCE } = api.deps.config;
    const now = Math.floor(api.clock.now().getTime() / 1000);
    const withoutRead = await new SignJWT({
      partyId: String(world.pmc.id),
      partyName: 'Party',
      accountRole: '2',
      scope: TokenScope.Webhook,
      permissions: encodePermissions([permissionByName('Party.Read').id]),
    })
      .setProtectedHeader({ alg: 'RS256', typ: 'JWT', kid: key.kid })
      .setSubject(webhookTokenSubject(registrationId))
      .setIssuer(JWT_ISSUER)
      .setAudience(JWT_AUDIENCE)
      .setIssuedAt(now)
      .setExpirationTime(now + 1800)
      .sign(key.privateKey);
    await expectProblem(await get('/api/properties', withoutRead), 403, {
      detail: 'This operation needs the permission Property.Read',
    });
    expect((await get('/api/parties', withoutRead)).status).toBe(200);
  });
});

/** A single read as a one-item list, so `ids` can read it. */
async function wrap(response: Response): Promise<Response> {
  if (response.status !== 200) return response;
  return new Response(JSON.stringify([await response.json()]), { status: 200 });
}
