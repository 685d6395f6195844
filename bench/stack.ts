import { execFile } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { freePort, ROOT, sampleRss, spawnTs, waitFor, type Child } from './processes';

/** What every process of the stack under test is given. */
export interface StackEnv {
  databaseUrl: string;
  /** Base64 of the key sealing signing secrets: the bench seals, the dispatcher opens. */
  secretKey: string;
  /** Keys the processes generate (a JWT key in development) go here, shared by API and dispatcher. */
  dataDir: string;
  concurrency: number;
}

const common = (stack: StackEnv): Record<string, string> => ({
  NODE_ENV: 'development',
  DATABASE_URL: stack.databaseUrl,
  SECRET_ENCRYPTION_KEY: stack.secretKey,
  DATA_DIR: stack.dataDir,
  LOG_LEVEL: 'warn',
  // the target is on 127.0.0.1
  ALLOW_PRIVATE_TARGETS: 'true',
});

/** The real dispatcher (apps/dispatcher/src/main.ts) as a child process, with its memory sampled. */
export interface RunningDispatcher {
  child: Child;
  /** Stops it (SIGTERM: it finishes and records what is in flight) and answers its peak RSS in MB. */
  stop(): Promise<number>;
}

/**
 * The Node flags production starts the bundle with (`start` in apps/dispatcher/package.json):
 * they bound the young generation and the heap, which V8 otherwise lets grow to several times
 * what is live (docs/performance.md, "Memory").
 */
const DISPATCHER_NODE_FLAGS = (
  JSON.parse(readFileSync(join(ROOT, 'apps/dispatcher/package.json'), 'utf8')) as {
    scripts: { start: string };
  }
).scripts.start
  .split(' ')
  .filter((word) => word.startsWith('--'));

let built: Promise<unknown> | undefined;
/** Builds the dispatcher's production bundle (apps/dispatcher/dist/main.mjs) once per bench run. */
const buildDispatcher = () =>
  (built ??= promisify(execFile)(process.execPath, ['apps/dispatcher/build.mjs'], { cwd: ROOT }));

/**
 * Starts the dispatcher as production runs it, the bundle `pnpm build` makes, with
 * DISPATCHER_CONCURRENCY = the bench's concurrency; resolves once it is healthy.
 */
export async function startDispatcher(stack: StackEnv): Promise<RunningDispatcher> {
  const [port] = await Promise.all([freePort(), buildDispatcher()]);
  const child = spawnTs(
    'apps/dispatcher/dist/main.mjs',
    [],
    {
      ...common(stack),
      DISPATCHER_PORT: String(port),
      DISPATCHER_CONCURRENCY: String(stack.concurrency),
    },
    'dispatcher',
    DISPATCHER_NODE_FLAGS,
  );
  const rss = sampleRss(child.process.pid!);
  await waitFor(
    async () => (await fetch(`http://127.0.0.1:${port}/healthz`)).status === 200,
    30_000,
    'the dispatcher did not become healthy',
    child,
  );
  return {
    child,
    stop: async () => {
      await child.stop();
      return rss.stop();
    },
  };
}

/** The real API (apps/api/src/main.ts) on a free 127.0.0.1 port; resolves with its base URL once healthy. */
export async function startApi(stack: StackEnv): Promise<{ url: string; child: Child }> {
  const port = await freePort();
  const child = spawnTs(
    'apps/api/src/main.ts',
    [],
    { ...common(stack), API_PORT: String(port), API_HOST: '127.0.0.1' },
    'api',
  );
  const url = `http://127.0.0.1:${port}`;
  await waitFor(
    async () => (await fetch(`${url}/healthz`)).status === 200,
    30_000,
    'the API did not become healthy',
    child,
  );
  return { url, child };
}
