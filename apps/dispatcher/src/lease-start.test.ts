import { createSecretBox, generatePrivateKeyPem, loadSigningKey } from '@platform/crypto';
import {
  createTestDatabase,
  eventually,
  propertyChange,
  seedChange,
  seedParty,
  seedRegistration,
  startTestTarget,
  TEST_SECRET_KEY,
  type TestDatabase,
  type TestTarget,
} from '@platform/testkit';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { systemClock, type Clock } from './clock';
import { loadConfig } from './config';
import { createDispatcher, type Dispatcher } from './dispatcher';
import { createLogger } from './logger';

// A lease starts when the database runs the statement that grants it, somewhere in its round
// trip. A dispatcher whose event loop stalls while the answer is on its way must count the lease
// from before the statement: counted from the answer, a row whose lease already ran out would
// look fresh and be delivered while another replica may be delivering it too (and, in a group,
// after its successor).

let db: TestDatabase;
let target: TestTarget;
let dispatcher: Dispatcher;
/** How far the dispatcher's clock is ahead of wall time. */
let skew = 0;
let partyId: number;
/** Lease statements (claims) answered so far. */
let claimsAnswered = 0;
let stalled = false;
/** Statements that handed claimed rows back. */
let handedBack = 0;
/** Which claim (1-based) answered late. */
let stalledClaim = 0;
/** For each request the target saw, how many claims had been answered by then. */
const claimsAtReceipt: number[] = [];

const clock: Clock = { ...systemClock, now: () => Date.now() + skew };

beforeAll(async () => {
  db = await createTestDatabase();
  target = await startTestTarget(() => {
    claimsAtReceipt.push(claimsAnswered);
    return {};
  });
  db.knex.on(
    'query-response',
    (response: { rows?: { claim?: { leased: { webhooks: unknown[] } } }[] }, query: { sql?: string }) => {
      if (query.sql?.includes('attempt_count = attempt_count - 1')) handedBack++;
      // either claim: the fair one or the notified rows' (both lease)
      if (!/webhooks_claim(_notified)?\(/.test(query.sql ?? '')) return;
      claimsAnswered++;
      // the first claim that leases anything (its answer as `webhook_deliveries` shapes it) answers 10 s late by the dispatcher's clock: longer
      // than the lease
      if (!stalled && (response.rows?.[0]?.claim?.leased.webhooks.length ?? 0) > 0) {
        stalled = true;
        stalledClaim = claimsAnswered;
        skew += 10_000;
      }
    },
  );
  partyId = await seedParty(db.knex, 'Stalled');
  await seedRegistration(db.knex, { partyId, targetUrl: target.url });
  dispatcher = createDispatcher({
    config: loadConfig({
      DATABASE_URL: db.url,
      DISPATCHER_PORT: '0',
      ALLOW_PRIVATE_TARGETS: 'true',
      WEBHOOK_TIMEOUT: '1s',
      DISPATCHER_LEASE: '5s',
    }),
    knex: db.knex,
    logger: createLogger({ level: 'silent', dispatcherId: 'stalled' }),
    secrets: createSecretBox(TEST_SECRET_KEY),
    signingKey: await loadSigningKey(generatePrivateKeyPem()),
    clock,
  });
  await dispatcher.start();
});

afterAll(async () => {
  await dispatcher?.stop();
  await target?.close();
  await db?.drop();
});

it('hands back what a claim answered after its lease ran out, and delivers it from a fresh claim', async () => {
  const ids = [
    ...(await seedChange(db.knex, propertyChange(partyId, 1))),
    ...(await seedChange(db.knex, propertyChange(partyId, 2))),
  ];
  await eventually(async () => {
    const rows = await db.knex('webhooks').whereIn('id', ids).pluck('completed_at');
    return rows.every((at) => at !== null);
  });
  // the stale claim's rows went back to the queue; each webhook reached the target once, from a
  // later claim
  expect(stalledClaim).toBeGreaterThan(0);
  expect(handedBack).toBeGreaterThan(0);
  expect(claimsAtReceipt).toHaveLength(2);
  expect(claimsAtReceipt.every((claims) => claims > stalledClaim)).toBe(true);
  // handing back uncounted the stale claim's attempt: each webhook was delivered on its first
  expect(await db.knex('webhooks').whereIn('id', ids).pluck('attempt_count')).toEqual([1, 1]);
});
