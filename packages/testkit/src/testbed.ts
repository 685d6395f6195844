import { afterAll, afterEach, beforeAll, expect } from 'vitest';
import { createTestDatabase, type TestDatabase } from './databases';
import { startDispatcher, type DispatcherProcess } from './dispatcher';
import { startTestTarget, type TargetScript, type TestTarget } from './target';

// Vitest hooks for the dispatcher's test files. A module of its own (`@platform/testkit/testbed`),
// not in the kit's index: it registers hooks, and the index is loaded outside vitest too (bench,
// chaos, Playwright). `afterAll`/`afterEach` run in reverse order of declaration (vitest's
// `stack`), so what is declared last stops first: dispatchers, then targets, then the database.

type Env = Record<string, string | undefined>;

/** The file's test database, forwarding to it once `beforeAll` created it (the testbed drops it). */
export type TestbedDatabase = Pick<TestDatabase, 'url' | 'knex'>;

const started = <T>(value: T | undefined): T => {
  if (value === undefined) throw new Error('the testbed starts in beforeAll; use it in a test or a hook');
  return value;
};

/** Creates the file's database in `beforeAll` and drops it in `afterAll`. */
function useDatabase(): TestbedDatabase {
  let database: TestDatabase | undefined;
  beforeAll(async () => {
    database = await createTestDatabase();
  });
  afterAll(async () => {
    await database?.drop();
  });
  return {
    get url() {
      return started(database).url;
    },
    get knex() {
      return started(database).knex;
    },
  };
}

/** Starts recording targets, each closed in `closeIn` (after the file or after each test). */
function useTargets(closeIn: typeof afterAll | typeof afterEach) {
  const targets: TestTarget[] = [];
  closeIn(async () => {
    for (const target of targets.splice(0)) await target.close();
  });
  return async (script?: TargetScript): Promise<TestTarget> => {
    const target = await startTestTarget(script);
    targets.push(target);
    return target;
  };
}

/** What `useDispatcherTestbed` answers; its database and dispatcher exist from its `beforeAll` on. */
export interface DispatcherTestbed {
  db: TestbedDatabase;
  readonly dispatcher: DispatcherProcess;
  /** Starts a recording target answering as `script` says; closed after the file. */
  target(script?: TargetScript): Promise<TestTarget>;
}

/**
 * The setup of a dispatcher test file with one dispatcher, in one call at its top: `beforeAll`
 * clones a test database and starts the real dispatcher on it with `env` (`startDispatcher`'s);
 * `afterAll` stops it (it must exit 0), closes the targets the tests started and drops the database.
 */
export function useDispatcherTestbed(env: Env = {}): DispatcherTestbed {
  const db = useDatabase();
  const target = useTargets(afterAll);
  let dispatcher: DispatcherProcess | undefined;
  beforeAll(async () => {
    dispatcher = await startDispatcher(db.url, env);
  });
  afterAll(async () => {
    if (dispatcher) expect(await dispatcher.stop()).toBe(0);
  });
  return {
    db,
    get dispatcher() {
      return started(dispatcher);
    },
    target,
  };
}

/** What `useDispatchersPerTest` answers. */
export interface PerTestDispatchers {
  db: TestbedDatabase;
  /** Starts a dispatcher with the file's `defaults` and `env` on top; stopped after the test. */
  dispatcher(env?: Env): Promise<DispatcherProcess>;
  /** Starts a recording target answering as `script` says; closed after the test. */
  target(script?: TargetScript): Promise<TestTarget>;
}

/**
 * The setup of a dispatcher test file whose tests each start their own dispatchers (their own
 * configuration, several replicas): one database for the file; after each test its dispatchers
 * are stopped, then its targets closed.
 */
export function useDispatchersPerTest(defaults: Env = {}): PerTestDispatchers {
  const db = useDatabase();
  const target = useTargets(afterEach);
  const dispatchers: DispatcherProcess[] = [];
  afterEach(async () => {
    for (const dispatcher of dispatchers.splice(0)) await dispatcher.stop();
  });
  return {
    db,
    dispatcher: async (env = {}) => {
      const dispatcher = await startDispatcher(db.url, { ...defaults, ...env });
      dispatchers.push(dispatcher);
      return dispatcher;
    },
    target,
  };
}
