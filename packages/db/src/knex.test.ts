import { afterAll, beforeAll, expect, it } from 'vitest';
import { createTestDatabase, type TestDatabase } from '@platform/testkit';
import { createKnex, missingSessionSettings } from './knex';

let db: TestDatabase;
beforeAll(async () => {
  db = await createTestDatabase();
});
afterAll(() => db.drop());

const setting = async (knex: ReturnType<typeof createKnex>, name: string) =>
  (await knex.raw<{ rows: Record<string, string>[] }>(`show ${name}`)).rows[0]![name] as string;

it('opens sessions with JIT off, and synchronous_commit off only when asked', async () => {
  const api = createKnex(db.url, { pool: { max: 1 } });
  const dispatcher = createKnex(db.url, { pool: { max: 1 }, synchronousCommit: false });
  try {
    expect(await setting(api, 'jit')).toBe('off');
    expect(await setting(api, 'synchronous_commit')).toBe('on');
    expect(await setting(dispatcher, 'jit')).toBe('off');
    expect(await setting(dispatcher, 'synchronous_commit')).toBe('off');
  } finally {
    await Promise.all([api.destroy(), dispatcher.destroy()]);
  }
});

it('names the session settings a session lacks (as behind a pooler that drops startup options)', async () => {
  const dispatcher = createKnex(db.url, { pool: { max: 1 }, synchronousCommit: false });
  try {
    expect(await missingSessionSettings(dispatcher, { synchronousCommit: false })).toEqual([]);
    // one connection: the pool's session, now without what its startup packet asked for
    await dispatcher.raw('set jit = on');
    await dispatcher.raw('set synchronous_commit = on');
    expect(await missingSessionSettings(dispatcher, { synchronousCommit: false })).toEqual([
      'jit=off',
      'synchronous_commit=off',
    ]);
    expect(await missingSessionSettings(dispatcher)).toEqual(['jit=off']);
  } finally {
    await dispatcher.destroy();
  }
});
