import { enqueueEntityChange, notifyWebhookDue } from '@platform/db';
import { WebhookState } from '@platform/shared';
import {
  attemptKindsOf,
  attemptsOf,
  eventually,
  propertyChange,
  seedChange,
  seedParty,
  seedRegistration,
  type TargetAnswer,
  waitForWebhook,
} from '@platform/testkit';
import { useDispatchersPerTest } from '@platform/testkit/testbed';
import { describe, expect, it } from 'vitest';

// The endpoint is the unit of isolation (docs/decisions.md › Delivery isolation), with the real
// dispatcher process, a real Postgres and one real HTTP server on 127.0.0.1 standing in for a
// receiving service many tenants point at: its paths are the endpoints, all on one host.

const { Successful } = WebhookState;

const { db, dispatcher, target } = useDispatchersPerTest({
  LOG_LEVEL: 'warn',
  DISPATCHER_POLL_INTERVAL: '60s',
});

/** A registration of `partyId` at `url` (Property events of `types`); answers it and its endpoint. */
async function registered(partyId: number, url: string, types: number[] = [1, 2, 3]) {
  const { id } = await seedRegistration(db.knex, {
    partyId,
    targetUrl: url,
    events: types.map((type) => ({ entityName: 'Property', type })),
  });
  const { target_id: endpointId } = await db.knex('webhook_registrations').where({ id }).first('target_id');
  return { registrationId: id, endpointId: endpointId as number };
}

const breakerOf = (endpointId: number) =>
  db
    .knex('webhook_targets')
    .where({ id: endpointId })
    .first('breaker_state', 'consecutive_failures', 'opens');

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

describe('endpoints sharing a host', () => {
  it('open one endpoint’s breaker for its own failures only: another tenant’s endpoint on the host gets no circuit-open attempt and every delivery on its first try', async () => {
    await dispatcher({
      WEBHOOK_TIMEOUT: '1s',
      // quick retries, so the failing endpoint's webhooks come round again while its breaker is open
      WEBHOOK_RETRY_SCHEDULE: '0ms,100ms,100ms,100ms,100ms,100ms,100ms',
      DISPATCHER_BREAKER_FAILURES: '3',
      DISPATCHER_BREAKER_COOLDOWN: '30s',
    });
    const server = await target((request) => ({ status: request.path === '/a' ? 500 : 200 }));
    const tenantA = await seedParty(db.knex, 'Tenant A');
    const tenantB = await seedParty(db.knex, 'Tenant B');
    const a = await registered(tenantA, `${server.origin}/a`);
    const b = await registered(tenantB, `${server.origin}/b`);
    expect(b.endpointId).not.toBe(a.endpointId);

    const healthy: number[] = [];
    const failing: number[] = [];
    for (let i = 1; i <= 3; i++) {
      failing.push(...(await seedChange(db.knex, propertyChange(tenantA, i))));
      healthy.push(...(await seedChange(db.knex, propertyChange(tenantB, i))));
    }
    await eventually(async () => (await breakerOf(a.endpointId)).breaker_state === 'open', {
      what: 'the failing endpoint’s breaker open',
    });
    // while it is open, both tenants keep writing: the failing one's webhooks are recorded
    // circuit-open in the same claims that deliver the healthy one's
    for (let i = 10; i < 20; i++) {
      failing.push(...(await seedChange(db.knex, propertyChange(tenantA, i))));
      healthy.push(...(await seedChange(db.knex, propertyChange(tenantB, i))));
      await sleep(50);
    }
    for (const id of healthy) await waitForWebhook(db.knex, id, Successful);
    await eventually(
      async () => ((await attemptKindsOf(db.knex, a.registrationId))['circuit-open'] ?? 0) > 0,
      {
        what: 'circuit-open attempts of the failing endpoint',
      },
    );

    // the failing endpoint's breaker is open and its webhooks were charged for it
    expect(await breakerOf(a.endpointId)).toMatchObject({ breaker_state: 'open', opens: 1 });
    // the healthy endpoint: closed, every webhook delivered on its first try, nothing circuit-open
    expect(await breakerOf(b.endpointId)).toMatchObject({ breaker_state: 'closed', consecutive_failures: 0 });
    expect(await attemptKindsOf(db.knex, b.registrationId)).toEqual({ none: healthy.length });
    for (const id of healthy) {
      expect(await attemptsOf(db.knex, id)).toMatchObject([
        { number: 1, status_code: 200, error_kind: null },
      ]);
      expect(server.requestsFor(id)).toHaveLength(1);
    }
  });

  it('keep another party’s endpoint and the same party’s second endpoint on the host within 1 s of their writes while one endpoint hangs with 100 webhooks due', async () => {
    await dispatcher({
      WEBHOOK_TIMEOUT: '2s',
      // the breaker kept shut: the per-endpoint limits and shares alone must hold the hang apart
      DISPATCHER_BREAKER_FAILURES: '10000',
    });
    const server = await target((request): TargetAnswer => (request.path === '/slow' ? { hang: true } : {}));
    const slowParty = await seedParty(db.knex, 'Slow tenant');
    const otherParty = await seedParty(db.knex, 'Other tenant');
    // the slow tenant's endpoint hears Created, its second endpoint Updated, on the same host
    const slow = await registered(slowParty, `${server.origin}/slow`, [1]);
    const sibling = await registered(slowParty, `${server.origin}/sibling`, [2]);
    const other = await registered(otherParty, `${server.origin}/other`, [2]);
    expect(new Set([slow.endpointId, sibling.endpointId, other.endpointId]).size).toBe(3);

    for (let i = 1; i <= 100; i++) await seedChange(db.knex, propertyChange(slowParty, 1_000 + i, {}, 1));
    await eventually(() => server.requests.some((r) => r.path === '/slow'), {
      what: 'the slow endpoint holding deliveries',
    });

    /** Per webhook: when its write began (epoch ms). */
    const writtenAt = new Map<number, number>();
    for (let i = 1; i <= 10; i++) {
      for (const party of [slowParty, otherParty]) {
        const started = Date.now();
        for (const id of await seedChange(db.knex, propertyChange(party, i))) writtenAt.set(id, started);
      }
      await sleep(100);
    }
    for (const id of writtenAt.keys()) await waitForWebhook(db.knex, id, Successful);

    const latencies = [...writtenAt].map(([id, started]) => ({
      id,
      path: server.requestsFor(id)[0]!.path,
      ms: server.requestsFor(id)[0]!.receivedAt - started,
    }));
    expect(latencies.filter((l) => l.path === '/sibling')).toHaveLength(10);
    expect(latencies.filter((l) => l.path === '/other')).toHaveLength(10);
    for (const latency of latencies)
      expect(latency.ms, `webhook ${latency.id} to ${latency.path}`).toBeLessThan(1_000);
    // the slow endpoint still had due work waiting throughout: most of its backlog was never tried
    const neverTried = await db
      .knex('webhooks')
      .where({ registration_id: slow.registrationId, attempt_count: 0 })
      .count({ n: '*' })
      .first();
    expect(Number(neverTried!.n)).toBeGreaterThan(50);
  });

  it('hold a host to DISPATCHER_MAX_PER_HOST, split evenly among its endpoints with work', async () => {
    await dispatcher({
      WEBHOOK_TIMEOUT: '3s',
      DISPATCHER_BREAKER_FAILURES: '10000',
      DISPATCHER_MAX_PER_ENDPOINT: '4',
      DISPATCHER_MAX_PER_HOST: '6',
    });
    const server = await target((): TargetAnswer => ({ hang: true }));
    const paths = ['/one', '/two', '/three'];
    const parties: number[] = [];
    for (const path of paths) {
      const partyId = await seedParty(db.knex);
      await registered(partyId, `${server.origin}${path}`);
      parties.push(partyId);
    }
    // 20 webhooks due to each endpoint, all at once (one transaction)
    await db.knex.transaction(async (trx) => {
      for (const partyId of parties)
        for (let i = 1; i <= 20; i++) await enqueueEntityChange(trx, propertyChange(partyId, i));
      await notifyWebhookDue(trx);
    });
    await eventually(() => server.requests.length > 0, { what: 'the first delivery' });
    // within the time-out nothing is answered: what arrived is what the dispatcher holds in flight
    await sleep(1_500);
    const byPath = new Map(
      paths.map((path) => [path, server.requests.filter((r) => r.path === path).length]),
    );
    // each endpoint alone could have 4 in flight (12 in all); the host holds them to 6, 2 each
    expect(server.requests).toHaveLength(6);
    expect(byPath).toEqual(new Map(paths.map((path) => [path, 2])));
  });
});
