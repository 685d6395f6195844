import {
  freePort,
  spawnNode,
  startApi as startTestApi,
  startDispatcher as startTestDispatcher,
  waitForHealthy,
  type NodeProcess,
} from '@platform/testkit';
import { sampleRss } from './processes';

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

/** The real dispatcher as a child process, with its memory sampled. */
export interface RunningDispatcher {
  child: NodeProcess;
  /** Stops it (SIGTERM: it finishes and records what is in flight) and answers its peak RSS in MB. */
  stop(): Promise<number>;
}

/**
 * Starts the dispatcher as production runs it, the bundle `pnpm build` makes with production's
 * Node flags, with DISPATCHER_CONCURRENCY = the bench's concurrency and `env` on top (a mode's
 * own settings, such as a shorter WEBHOOK_TIMEOUT); resolves once it is healthy.
 */
export async function startDispatcher(
  stack: StackEnv,
  env: Record<string, string> = {},
): Promise<RunningDispatcher> {
  const child = await startTestDispatcher(
    stack.databaseUrl,
    { ...common(stack), DISPATCHER_CONCURRENCY: String(stack.concurrency), ...env },
    // its output is kept for an error message, not echoed
    { bundle: true, onOutput: () => {} },
  );
  const rss = sampleRss(child.process.pid!);
  return {
    child,
    stop: async () => {
      await child.stop();
      return rss.stop();
    },
  };
}

/**
 * The real API as production runs it, the bundle `pnpm --filter @platform/api build` makes with
 * the Node flags of its `start` script (or `entry`, another build of it), on a free 127.0.0.1
 * port; resolves with its base URL once healthy.
 */
export async function startApi(
  stack: StackEnv,
  options: { entry?: string; nodeFlags?: string[] } = {},
): Promise<{ url: string; child: NodeProcess }> {
  const child = await startTestApi(stack.databaseUrl, common(stack), {
    bundle: true,
    ...options,
    // its output is kept for an error message, not echoed
    onOutput: () => {},
  });
  return { url: child.url, child };
}

/**
 * The bare-handler baseline (bench/bare-api.ts) on a free 127.0.0.1 port, on the stack's database
 * and verifying the API's tokens with its key; resolves with its base URL once healthy.
 */
export async function startBareApi(stack: StackEnv): Promise<{ url: string; child: NodeProcess }> {
  const port = await freePort();
  const child = spawnNode('bench/bare-api.ts', {
    args: [String(port)],
    env: { DATABASE_URL: stack.databaseUrl, DATA_DIR: stack.dataDir },
    label: 'bare-api',
  });
  const url = `http://127.0.0.1:${port}`;
  await waitForHealthy(`${url}/healthz`, child);
  return { url, child };
}
