import { randomBytes } from 'node:crypto';
import { createSecretBox, generatePrivateKeyPem, loadSigningKey } from '@platform/crypto';
import { createTestDatabase, eventually, type TestDatabase } from '@platform/testkit';
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

  it('reports the loop stopped once stopping', async () => {
    await dispatcher.stop();
    expect(dispatcher.health()).toMatchObject({ loop: 'stopped', listening: false });
  });
});
