import { afterAll, beforeAll, expect } from 'vitest';
import { createTestDatabase, type TestDatabase } from './databases';
import { startDispatcher, type DispatcherProcess } from './dispatcher';
import { startTestTarget, type TargetScript, type TestTarget } from './target';

/** What `useDispatcherTestbed` answers; its database and dispatcher exist from its `beforeAll` on. */
export interface DispatcherTestbed {
  /** The file's database (forwards to it once created; the testbed drops it). */
  db: Pick<TestDatabase, 'url' | 'knex'>;
  readonly dispatcher: DispatcherProcess;
  /** Starts a recording target answering as `script` says; the testbed closes it after the file. */
  target(script?: TargetScript): Promise<TestTarget>;
}

/**
 * The setup of a dispatcher test file, in one call at its top: `beforeAll` clones a test database
 * and starts the real dispatcher on it with `env` (`startDispatcher`'s); `afterAll` stops it (it
 * must exit 0), closes the targets the tests started and drops the database. A module of its own
 * (`@platform/testkit/testbed`), since it registers vitest hooks and the kit's index is loaded
 * outside vitest too (bench, chaos, Playwright).
 */
export function useDispatcherTestbed(env: Record<string, string | undefined> = {}): DispatcherTestbed {
  let database: TestDatabase | undefined;
  let dispatcher: DispatcherProcess | undefined;
  const targets: TestTarget[] = [];
  const started = <T>(value: T | undefined): T => {
    if (value === undefined)
      throw new Error('useDispatcherTestbed: it starts in beforeAll; use it in a test or a hook');
    return value;
  };
  beforeAll(async () => {
    database = await createTestDatabase();
    dispatcher = await startDispatcher(database.url, env);
  });
  afterAll(async () => {
    if (dispatcher) expect(await dispatcher.stop()).toBe(0);
    for (const target of targets) await target.close();
    await database?.drop();
  });
  return {
    db: {
      get url() {
        return started(database).url;
      },
      get knex() {
        return started(database).knex;
      },
    },
    get dispatcher() {
      return started(dispatcher);
    },
    target: async (script) => {
      const target = await startTestTarget(script);
      targets.push(target);
      return target;
    },
  };
}
