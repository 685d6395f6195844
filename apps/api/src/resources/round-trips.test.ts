import { loadSigningKey, signWebhookToken } from '@platform/crypto';
import type { PartyType } from '@platform/shared';
import { beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { countStatements, type StatementCounter, type Traffic } from '../../tests/support/statement-counter';
import { testPrivateKeyPem, useTestApi } from '../../tests/support/api';
import { buildProperty, resetCapture, subscribe } from '../../tests/support/resources';

// What a request costs the database, counted at the driver (statements sent,
// command tags answered, ReadyForQuery = one round trip each), so the numbers cannot creep back.
// docs/performance.md#statements-per-api-request reports them.

const { api, world } = useTestApi({ world: true });
let counter: StatementCounter;
const PROPERTIES = 25;
let propertyId: number;

beforeAll(async () => {
  counter = countStatements(api.deps.knex);
  for (let i = 0; i < PROPERTIES; i += 1) propertyId = await buildProperty(api, world.pmc.id);
});
beforeEach(() => resetCapture(api));

/** The traffic of one request, and its answer (asserted 200 unless `status` says otherwise). */
async function counted(
  path: string,
  init: { method?: string; json?: unknown; token?: string } = {},
  status = 200,
): Promise<{ traffic: Traffic; body: unknown }> {
  counter.start();
  let traffic: Traffic;
  let response: Response;
  try {
    response = await api.fetch(path, { token: world.pmc.full.token, ...init });
  } finally {
    traffic = counter.stop();
  }
  const text = await response.text();
  expect(response.status, text).toBe(status);
  return { traffic, body: text ? (JSON.parse(text) as unknown) : undefined };
}

describe('statements and round trips per request', () => {
  it('GET list: the page and its total in one statement, one round trip', async () => {
    const { traffic, body } = await counted('/api/properties?PageSize=20');
    expect(body).toMatchObject({ totalCount: PROPERTIES, totalPages: 2, hasNextPage: true });
    expect((body as { items: unknown[] }).items).toHaveLength(20);
    expect(traffic).toMatchObject({ completed: ['SELECT 20'], roundTrips: 1, errors: 0 });
  });

  it('GET list: a page past the last row still answers the total, in the same one statement', async () => {
    for (const pageNumber of [2, 3, 100]) {
      const { traffic, body } = await counted(`/api/properties?PageSize=20&PageNumber=${pageNumber}`);
      expect(body).toMatchObject({
        pageNumber,
        totalCount: PROPERTIES,
        totalPages: 2,
        hasPreviousPage: true,
        hasNextPage: false,
      });
      expect((body as { items: unknown[] }).items).toHaveLength(pageNumber === 2 ? 5 : 0);
      expect(traffic).toMatchObject({ roundTrips: 1, errors: 0 });
    }
    // and an empty scope: no rows at all
    const { traffic, body } = await counted('/api/properties', { token: world.insurer.full.token });
    expect(body).toMatchObject({ items: [], totalCount: 0, totalPages: 0, hasNextPage: false });
    expect(traffic).toMatchObject({ completed: ['SELECT 1'], roundTrips: 1 });
  });

  it('a statement compiled once answers each caller its own scope, in the order asked', async () => {
    const ids = async (token: string, query = '') => {
      const { body } = await counted(`/api/properties?PageSize=100${query}`, { token });
      return (body as { items: { id: number; partyId: number }[] }).items;
    };
    const own = await ids(world.pmc.full.token);
    expect(own).toHaveLength(PROPERTIES);
    expect(await ids(world.otherPmc.full.token)).toEqual([]);
    const all = await ids(world.admin.full.token);
    expect(all.filter((row) => row.partyId === world.pmc.id)).toEqual(own);
    expect(await ids(world.pmc.full.token, '&AscendingOrder=false')).toEqual([...own].reverse());
  });

  it('GET by id: one statement', async () => {
    const { traffic, body } = await counted(`/api/properties/${propertyId}`);
    expect(body).toMatchObject({ id: propertyId, partyId: world.pmc.id });
    expect(traffic).toMatchObject({ completed: ['SELECT 1'], roundTrips: 1, errors: 0 });
    const missing = await counted(`/api/properties/${propertyId + 1000}`, {}, 404);
    expect(missing.traffic).toMatchObject({ completed: ['SELECT 0'], roundTrips: 1 });
  });

  it('PATCH with 10 subscribed registrations: BEGIN, the scoped update, the fan-out with its NOTIFY, COMMIT', async () => {
    for (let i = 0; i < 10; i += 1) await subscribe(api, world.pmc.id, 'Property', [2]);
    const { traffic, body } = await counted(`/api/properties/${propertyId}`, {
      method: 'PATCH',
      json: { notes: 'counted' },
    });
    expect(body).toMatchObject({ id: propertyId, notes: 'counted' });
    expect(traffic).toMatchObject({
      completed: ['BEGIN', 'UPDATE 1', 'SELECT 1', 'COMMIT'],
      roundTrips: 4,
      errors: 0,
    });
    expect(await api.db.knex('webhooks').count<{ count: number }[]>({ count: '*' })).toEqual([{ count: 10 }]);
  });

  it('a webhook token pays one deliberate read more: its registration must still be live', async () => {
    const registrationId = await subscribe(api, world.pmc.id, 'Property', [2]);
    const key = await loadSigningKey(testPrivateKeyPem());
    const { token } = await signWebhookToken(
      key,
      { registrationId, partyId: world.pmc.id, partyName: 'Party', partyType: world.pmc.type as PartyType },
      { issuer: api.deps.config.JWT_ISSUER, audience: api.deps.config.JWT_AUDIENCE, now: api.clock.now() },
    );
    const { traffic } = await counted('/api/properties?PageSize=20', { token });
    expect(traffic).toMatchObject({ completed: ['SELECT 1', 'SELECT 20'], roundTrips: 2, errors: 0 });
  });
});
