import { createSecretBox, generatePrivateKeyPem, loadSigningKey, type Knex } from '@platform/db';
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
import { loadConfig } from './config';
import { createDispatcher, type Dispatcher } from './dispatcher';
import { createLogger } from './logger';

// A wake-up that comes while the loop's claim is on its way announces work that claim's snapshot
// may not see. The dispatcher claims it at once, alongside, instead of after that claim's answer:
// here the loop's claim is held up (for as long as the test likes) by a lock on the breaker row of
// a target whose cool-down is over, and a webhook to another target, announced meanwhile, must
// reach that target before the held claim answers.

let db: TestDatabase;
let slowTarget: TestTarget;
let target: TestTarget;
let dispatcher: Dispatcher | undefined;
let lock: Knex.Transaction | undefined;

beforeAll(async () => {
  db = await createTestDatabase();
  [slowTarget, target] = await Promise.all([startTestTarget(), startTestTarget()]);
});

afterAll(async () => {
  await lock?.rollback().catch(() => {});
  await dispatcher?.stop();
  await Promise.all([slowTarget?.close(), target?.close()]);
  await db?.drop();
});

/** Claims of this database running right now. */
const claimsRunning = async () => {
  const { rows } = await db.knex.raw<{ rows: { count: number }[] }>(
    `select count(*)::int as count from pg_stat_activity
      where datname = current_database() and state = 'active' and query like 'with recursive regs(id)%'`,
  );
  return rows[0]!.count;
};

/** Claims of this database waiting for a lock right now (the claim's text is longer than pg_stat_activity keeps). */
const claimsWaitingForALock = async () => {
  const { rows } = await db.knex.raw<{ rows: { count: number }[] }>(
    `select count(*)::int as count from pg_stat_activity
      where datname = current_database() and wait_event_type = 'Lock' and query like 'with recursive regs(id)%'`,
  );
  return rows[0]!.count;
};

it('claims work announced during a held-up claim without waiting for that claim', async () => {
  const slowParty = await seedParty(db.knex, 'Held up');
  const party = await seedParty(db.knex, 'Announced');
  const slow = await seedRegistration(db.knex, { partyId: slowParty, targetUrl: slowTarget.url });
  await seedRegistration(db.knex, { partyId: party, targetUrl: target.url });
  // the held-up target: its breaker's cool-down is over, so a claim takes its trial and locks its row
  const { target_id: slowTargetId } = (await db
    .knex('webhook_registrations')
    .where('id', slow.id)
    .first('target_id')) as {
    target_id: number;
  };
  await db
    .knex('webhook_targets')
    .where('id', slowTargetId)
    .update({ breaker_state: 'open', open_until: db.knex.raw(`now() - interval '1 second'`) });
  lock = await db.knex.transaction();
  await lock('webhook_targets').where('id', slowTargetId).forUpdate().select('id');

  dispatcher = createDispatcher({
    config: loadConfig({ DATABASE_URL: db.url, DISPATCHER_PORT: '0', ALLOW_PRIVATE_TARGETS: 'true' }),
    knex: db.knex,
    logger: createLogger({ level: 'silent', dispatcherId: 'alongside' }),
    secrets: createSecretBox(TEST_SECRET_KEY),
    signingKey: await loadSigningKey(generatePrivateKeyPem()),
  });
  await dispatcher.start();
  await eventually(() => dispatcher!.health().listening, { what: 'the dispatcher does not listen' });
  // the claims of the start and of LISTEN's wake-up have answered: the loop sleeps
  await new Promise((resolve) => setTimeout(resolve, 300));
  await eventually(async () => (await claimsRunning()) === 0, { what: 'the start-up claims did not answer' });
  // the loop claims the work this announces and waits for the lock
  await seedChange(db.knex, propertyChange(slowParty, 1));
  await eventually(async () => (await claimsWaitingForALock()) === 1, { what: 'the claim is not held up' });

  // later snapshots no longer see the held-up registration's work, so a new claim passes the lock
  await db.knex('webhook_registrations').where('id', slow.id).update({ status: 'paused' });
  const [announced] = await seedChange(db.knex, propertyChange(party, 2));
  await eventually(() => target.requestsFor(announced!).length === 1, {
    what: 'the announced webhook was not delivered while the other claim was held up',
  });
  expect(await claimsWaitingForALock()).toBe(1);
  expect(slowTarget.requests).toHaveLength(0);

  // released, the held-up claim completes: its snapshot still saw the trial's webhook
  await lock.rollback();
  lock = undefined;
  await eventually(() => slowTarget.requests.length === 1, { what: 'the held-up claim did not deliver' });
});
