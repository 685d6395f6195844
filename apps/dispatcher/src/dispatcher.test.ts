import { randomBytes } from 'node:crypto';
import { createSecretBox, generatePrivateKeyPem, loadSigningKey } from '@platform/crypto';
import { createTestDatabase, eventually, seedParty, type TestDatabase } from '@platform/testkit';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { systemClock, type Clock } from './clock';
import { loadConfig } from './config';
import { createDispatcher, type Dispatcher } from './dispatcher';
import { createLogger } from './logger';

describe('createDispatcher', () => {
  let db: TestDatabase;
  let dispatcher: Dispatcher;
  let base: string;
  /** How far the test moved the dispatcher's clock ahead of wall time. */
  let skew = 0;
  /** The dispatcher's timers not yet fired or cleared, with their delays. */
  const pending = new Map<unknown, number>();
  const clock: Clock = {
    now: () => Date.now() + skew,
    setTimeout: (callback, ms) => {
      const handle = systemClock.setTimeout(() => {
        pending.delete(handle);
        callback();
      }, ms);
      pending.set(handle, ms);
      return handle;
    },
    clearTimeout: (handle) => {
      pending.delete(handle);
      systemClock.clearTimeout(handle);
    },
  };
  /** The loop found nothing due and sleeps until the poll: no turn comes unless woken. */
  const sleepingUntilThePoll = () => [...pending.values()].some((ms) => ms > 30 * 60_000);
  // a long poll, so the idle loop sleeps through the test unless a NOTIFY wakes it
  const config = (url: string) =>
    loadConfig({ DATABASE_URL: url, DISPATCHER_PORT: '0', DISPATCHER_POLL_INTERVAL: '1h' });
  const stalledAfterMs = 2 * 3_600_000 + 30_000;
  const healthz = async () => {
    const response = await fetch(`${base}/healthz`);
    return { status: response.status, body: (await response.json()) as Record<string, unknown> };
  };

  beforeAll(async () => {
    db = await createTestDatabase();
    dispatcher = createDispatcher({
      config: config(db.url),
      knex: db.knex,
      logger: createLogger({ level: 'silent', dispatcherId: 'factory-test' }),
      secrets: createSecretBox(randomBytes(32)),
      signingKey: await loadSigningKey(generatePrivateKeyPem()),
      clock,
    });
    const address = await dispatcher.start();
    base = `http://127.0.0.1:${address.port}`;
  });

  afterAll(async () => {
    await dispatcher?.stop();
    await db?.drop();
  });

  it('serves /healthz on the port it was given (0: any free one)', async () => {
    // listening first: its wake-up makes the loop turn again
    await eventually(async () => (await healthz()).status === 200 && sleepingUntilThePoll(), {
      what: 'healthy and idle',
    });
    expect(dispatcher.health()).toEqual({ listening: true, loop: 'running', inFlight: 0 });
  });

  it('judges a stalled loop by the injected clock, and a turn makes it healthy again', async () => {
    skew += stalledAfterMs + 1_000;
    expect(await healthz()).toMatchObject({ status: 503, body: { loop: 'stalled' } });
    expect(await (await fetch(`${base}/metrics`)).text()).toMatch(/^dispatcher_loop_alive 0$/m);
    // a wake-up makes the sleeping loop turn, which it stamps with the same clock
    await db.knex.raw(`select pg_notify('webhook_due', '')`);
    await eventually(async () => (await healthz()).status === 200, { what: 'a turn after the wake-up' });
    expect(dispatcher.health().loop).toBe('running');
  });

  it('sleeps rather than walks on when every endpoint with due work is held back: no busy loop', async () => {
    // more registrations than a claim's batch (64 here), each its own endpoint, every one
    // half-open with its trial in flight: due work everywhere, room nowhere
    const partyId = await seedParty(db.knex, 'Held back');
    await db.knex.raw(
      `insert into webhook_registrations (party_id, bucket, target_url, should_group, should_group_continue_after_fail, signing_secret)
       select ?, (select bucket from parties where id = ?), 'http://127.0.0.1:9/held' || i, false, false, 'sealed'
         from generate_series(1, 150) as i`,
      [partyId, partyId],
    );
    const held = db.knex('webhook_registrations').where({ party_id: partyId }).select('id');
    await db.knex.raw(
      `insert into webhook_events (registration_id, bucket, entity_name, type)
       select r.id, r.bucket, 'Unit', 2 from webhook_registrations r where r.id in (${held.toQuery()})`,
    );
    const [change] = await db
      .knex('entity_changes')
      .insert({ entity_name: 'Unit', type: 2, entity_id: 1, entity: {}, initiator_party_id: partyId })
      .returning('id');
    await db.knex.raw(
      `insert into webhooks (registration_id, bucket, event_id, entity_change_id, state, next_attempt_at)
       select e.registration_id, e.bucket, e.id, ?, 1, now() - interval '1 second'
         from webhook_events e where e.registration_id in (${held.toQuery()})`,
      [change.id],
    );
    await db
      .knex('webhook_targets')
      .where({ party_id: partyId })
      .update({ breaker_state: 'half-open', trial_until: db.knex.raw(`now() + interval '1 hour'`) });
    try {
      const timersBefore = new Set(pending.keys());
      await db.knex.raw(`select pg_notify('webhook_due', '')`);
      // every claim comes back empty from a walk cut at a batch of registrations: the loop walks
      // on (more), but after two laps with nothing leased it sleeps until its poll again
      await eventually(
        () => [...pending].some(([handle, ms]) => !timersBefore.has(handle) && ms > 30 * 60_000),
        { what: 'the loop asleep until its poll after the wake-up', timeoutMs: 10_000 },
      );
      expect(await db.knex('webhooks').whereNotNull('locked_by').pluck('id')).toEqual([]);
    } finally {
      await db.knex('webhooks').delete();
    }
  });

  it('reports the loop stopped once stopping', async () => {
    await dispatcher.stop();
    expect(dispatcher.health()).toMatchObject({ loop: 'stopped', listening: false });
  });
});
