import { createSecretBox, generatePrivateKeyPem, loadSigningKey } from '@platform/crypto';
import { enqueueEntityChange, type EntityChangeInput } from '@platform/db';
import { WebhookState } from '@platform/shared';
import {
  createTestDatabase,
  eventually,
  propertyChange,
  seedParty,
  seedRegistration,
  startTestTarget,
  TEST_SECRET_KEY,
  truncateWebhooks,
  type TestDatabase,
  type TestTarget,
} from '@platform/testkit';
import { afterAll, afterEach, beforeAll, expect, it } from 'vitest';
import { loadConfig } from './config';
import { createDispatcher, type Dispatcher } from './dispatcher';
import { createLogger } from './logger';

// The notified rows' claim (docs/dispatcher.md › The notified rows' claim) in the real dispatcher,
// against a real Postgres and a real HTTP target: an idle dispatcher takes the rows an enqueue's
// NOTIFY named by primary key, and whatever that claim leaves goes to the fair claim at once. The
// poll is an hour: nothing here is found by it.

let db: TestDatabase;
let target: TestTarget;
let partyId: number;
const dispatchers: Dispatcher[] = [];

async function startOne(id: string): Promise<Dispatcher> {
  const dispatcher = createDispatcher({
    config: loadConfig({
      DATABASE_URL: db.url,
      DISPATCHER_PORT: '0',
      DISPATCHER_ID: id,
      ALLOW_PRIVATE_TARGETS: 'true',
      DISPATCHER_POLL_INTERVAL: '1h',
    }),
    knex: db.knex,
    logger: createLogger({ level: 'silent', dispatcherId: id }),
    secrets: createSecretBox(TEST_SECRET_KEY),
    signingKey: await loadSigningKey(generatePrivateKeyPem()),
  });
  await dispatcher.start();
  dispatchers.push(dispatcher);
  // listening, and both start-up claims sent: the loop's first, and the fair claim LISTEN's own
  // wake-up asks for (a NOTIFY may have been missed before it); then a moment for the second to
  // answer, so the loop is idle when a test writes
  await eventually(
    () => dispatcher.health().listening && dispatcher.metrics.claims.get({ kind: 'fair' }) >= 2,
  );
  await new Promise((resolve) => setTimeout(resolve, 250));
  return dispatcher;
}

const claims = (dispatcher: Dispatcher) => ({
  fair: dispatcher.metrics.claims.get({ kind: 'fair' }),
  notified: dispatcher.metrics.claims.get({ kind: 'notified' }),
});

/** One change in a transaction of its own, as the API writes it (the enqueue's NOTIFY only); its webhook ids. */
const write = (change: EntityChangeInput): Promise<number[]> =>
  db.knex.transaction(async (trx) => {
    await enqueueEntityChange(trx, change);
    return (
      await trx('webhooks')
        .where('entity_change_id', trx.raw(`currval('entity_changes_id_seq')`))
        .orderBy('id')
        .pluck('id')
    ).map(Number);
  });

const delivered = async (ids: number[]) =>
  (await db.knex('webhooks').whereIn('id', ids).select('state', 'attempt_count')).every(
    (w) => w.state === WebhookState.Successful && w.attempt_count === 1,
  );

beforeAll(async () => {
  db = await createTestDatabase();
  target = await startTestTarget(() => ({}));
});
afterEach(async () => {
  await Promise.all(dispatchers.splice(0).map((d) => d.stop()));
  await truncateWebhooks(db.knex);
  target.requests.splice(0);
});
afterAll(async () => {
  await target?.close();
  await db?.drop();
});

it('an idle dispatcher takes a new change’s webhook by primary key, with no fair claim', async () => {
  partyId = await seedParty(db.knex);
  await seedRegistration(db.knex, { partyId, targetUrl: target.url });
  const dispatcher = await startOne('d1');
  const before = claims(dispatcher);
  const ids = await write(propertyChange(partyId, 1));
  await target.waitForAnswered(ids[0]!);
  await eventually(() => delivered(ids), { what: 'the webhook Successful on its first attempt' });
  expect(claims(dispatcher)).toEqual({ fair: before.fair, notified: before.notified + 1 });
});

it('leaves what the notified claim does not take to a fair claim at once: two webhooks of one endpoint', async () => {
  partyId = await seedParty(db.knex);
  // two registrations of one party and URL: one endpoint, so the notified claim takes one row
  await seedRegistration(db.knex, { partyId, targetUrl: target.url });
  await seedRegistration(db.knex, { partyId, targetUrl: target.url });
  const dispatcher = await startOne('d1');
  const before = claims(dispatcher);
  const ids = await write(propertyChange(partyId, 1));
  expect(ids).toHaveLength(2);
  await eventually(() => delivered(ids), { what: 'both webhooks Successful on their first attempt' });
  const after = claims(dispatcher);
  expect(after.notified).toBe(before.notified + 1);
  expect(after.fair).toBeGreaterThan(before.fair);
});

it('takes a change’s webhook by primary key while a delivery to another endpoint of its host is in flight', async () => {
  // two parties pointing at one hook service: two endpoints of one origin
  const [first, second] = [await seedParty(db.knex, 'First'), await seedParty(db.knex, 'Second')];
  await seedRegistration(db.knex, { partyId: first, targetUrl: `${target.url}/first` });
  await seedRegistration(db.knex, { partyId: second, targetUrl: `${target.url}/second` });
  let release!: () => void;
  const held = new Promise<void>((resolve) => (release = resolve));
  target.script = async (request) => {
    if (request.path.endsWith('/first')) await held;
    return {};
  };
  try {
    const dispatcher = await startOne('d1');
    const before = claims(dispatcher);
    const ids = await write(propertyChange(first, 1));
    await eventually(() => target.requests.length === 1, { what: 'the first delivery in flight' });
    ids.push(...(await write(propertyChange(second, 1))));
    await target.waitForAnswered(ids[1]!);
    release();
    await eventually(() => delivered(ids), { what: 'both webhooks Successful on their first attempt' });
    expect(claims(dispatcher)).toEqual({ fair: before.fair, notified: before.notified + 2 });
  } finally {
    release();
    target.script = () => ({});
  }
});

it('loses no wake-up that comes while a notified claim is on its way', async () => {
  partyId = await seedParty(db.knex);
  await seedRegistration(db.knex, { partyId, targetUrl: target.url });
  const dispatcher = await startOne('d1');
  const written: Promise<number[]>[] = [];
  // as the first notified claim is sent, another change commits
  const onQuery = (query: { sql?: string }) => {
    if (written.length === 0 && query.sql?.includes('webhooks_claim_notified(')) {
      written.push(write(propertyChange(partyId, 2)));
    }
  };
  db.knex.on('query', onQuery);
  try {
    const first = await write(propertyChange(partyId, 1));
    await eventually(() => written.length === 1, { what: 'the second change written during the claim' });
    const ids = [...first, ...(await written[0]!)];
    await eventually(() => delivered(ids), { what: 'both webhooks Successful, without the poll' });
    expect(claims(dispatcher).notified).toBeGreaterThanOrEqual(1);
  } finally {
    db.knex.off('query', onQuery);
  }
});

it('two replicas deliver each notified webhook once', async () => {
  partyId = await seedParty(db.knex);
  await seedRegistration(db.knex, { partyId, targetUrl: target.url });
  const [a, b] = [await startOne('d1'), await startOne('d2')];
  const ids: number[] = [];
  for (let i = 1; i <= 40; i++) ids.push(...(await write(propertyChange(partyId, i))));
  await eventually(() => delivered(ids), {
    what: 'every webhook Successful on its first attempt',
    timeoutMs: 20_000,
  });
  const seen = target.requests.map((r) => Number(r.webhookId));
  expect(seen.sort((x, y) => x - y)).toEqual(ids);
  expect(claims(a!).notified + claims(b!).notified).toBeGreaterThan(0);
});
