import knexFactory from 'knex';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { isDatabaseUnavailable } from './errors';
import { createKnex } from './knex';
import { createTestDatabase, eventually, freePort, type TestDatabase } from '@platform/testkit';

let db: TestDatabase;
beforeAll(async () => {
  db = await createTestDatabase();
});
afterAll(() => db.drop());

/** What `run` rejects with. */
const failure = (run: () => Promise<unknown>) =>
  run().then(
    () => undefined,
    (error: unknown) => error,
  );

describe('isDatabaseUnavailable', () => {
  it('is true for a server that refuses connections and for a pool that gave up waiting', async () => {
    const nobody = createKnex(`postgres://postgres@127.0.0.1:${await freePort()}/postgres`);
    try {
      expect(isDatabaseUnavailable(await failure(() => nobody.raw('select 1')))).toBe(true);
    } finally {
      await nobody.destroy();
    }
    const busy = knexFactory({
      client: 'pg',
      connection: db.url,
      pool: { min: 0, max: 1 },
      acquireConnectionTimeout: 200,
    });
    try {
      const held = await busy.transaction();
      expect(isDatabaseUnavailable(await failure(() => busy.raw('select 1')))).toBe(true);
      await held.rollback();
    } finally {
      await busy.destroy();
    }
  });

  it('is true when the server ends the session, false for a statement that is wrong', async () => {
    const victim = createKnex(db.url, { pool: { max: 1 } });
    try {
      const { rows } = await victim.raw<{ rows: { pid: number }[] }>('select pg_backend_pid() as pid');
      const pid = rows[0]!.pid;
      // ended while a statement runs on it: terminating an idle session instead lets the pool
      // notice first and hand the next statement a fresh connection, which then succeeds
      const running = failure(() => victim.raw('select pg_sleep(30)'));
      await eventually(async () => {
        const { rows: active } = await db.knex.raw<{ rows: unknown[] }>(
          `select 1 from pg_stat_activity where pid = ? and state = 'active'`,
          [pid],
        );
        return active.length > 0;
      });
      await db.knex.raw('select pg_terminate_backend(?)', [pid]);
      expect(isDatabaseUnavailable(await running)).toBe(true);
    } finally {
      await victim.destroy();
    }
    expect(isDatabaseUnavailable(await failure(() => db.knex.raw('select * from no_such_table')))).toBe(
      false,
    );
    expect(isDatabaseUnavailable(await failure(() => db.knex.raw('select 1/0')))).toBe(false);
    expect(isDatabaseUnavailable(new Error('boom'))).toBe(false);
  });
});
