import { execFile } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { freePort } from './ports';
import { ROOT, spawnNode, waitForHealthy, type NodeProcess, type SpawnOptions } from './processes';
import { TEST_SECRET_KEY } from './seed';

/** The real dispatcher as a child process. */
export interface DispatcherProcess extends NodeProcess {
  /** Its status port (`/healthz`, `/metrics`). */
  port: number;
  /** Its JSON log lines, parsed, in order. */
  readonly logs: Record<string, unknown>[];
  /** Everything it wrote to stdout and stderr so far, raw (log lines or not), in order of arrival. */
  readonly output: string;
}

/**
 * The Node flags production starts the bundle with (`start` in apps/dispatcher/package.json):
 * they bound the young generation and the heap (docs/performance.md, "Memory").
 */
const BUNDLE_NODE_FLAGS = (
  JSON.parse(readFileSync(join(ROOT, 'apps/dispatcher/package.json'), 'utf8')) as {
    scripts: { start: string };
  }
).scripts.start
  .split(' ')
  .filter((word) => word.startsWith('--'));

let built: Promise<unknown> | undefined;
/** The production bundle of the dispatcher, relative to ROOT. */
export const DISPATCHER_BUNDLE = 'apps/dispatcher/dist/main.mjs';

/** Builds the production bundle (DISPATCHER_BUNDLE) once per process. */
export const buildBundle = () =>
  (built ??= promisify(execFile)(process.execPath, ['apps/dispatcher/build.mjs'], { cwd: ROOT }));

export interface StartDispatcherOptions {
  /** Run the production bundle with production's Node flags instead of the TypeScript source. */
  bundle?: boolean;
  /** Every chunk of its output; without it, its stderr is echoed to this process's stderr. */
  onOutput?: SpawnOptions['onOutput'];
  /** How long it may take to answer /healthz 200. */
  timeoutMs?: number;
}

/**
 * Spawns the real dispatcher against `databaseUrl`, sharing TEST_SECRET_KEY with
 * `seedRegistration`, with private targets allowed (targets live on 127.0.0.1), debug logs, its
 * own data folder (keys it may generate never land in the developer's .data) and `env` on top
 * (e.g. `WEBHOOK_RETRY_SCHEDULE`, `DATA_DIR`). A variable given as undefined is left unset, so
 * `{ ALLOW_PRIVATE_TARGETS: undefined }` leaves the choice to the dispatcher's own default.
 * Resolves once its LISTEN connection is up (/healthz answers 200).
 */
export async function startDispatcher(
  databaseUrl: string,
  env: Record<string, string | undefined> = {},
  options: StartDispatcherOptions = {},
): Promise<DispatcherProcess> {
  const [port] = await Promise.all([freePort(), options.bundle ? buildBundle() : undefined]);
  const dataDir = mkdtempSync(join(tmpdir(), 'dispatcher-test-'));
  const logs: Record<string, unknown>[] = [];
  let output = '';
  let pending = '';
  const child = spawnNode(options.bundle ? DISPATCHER_BUNDLE : 'apps/dispatcher/src/main.ts', {
    label: 'dispatcher',
    nodeFlags: options.bundle ? BUNDLE_NODE_FLAGS : [],
    env: {
      NODE_ENV: 'test',
      LOG_LEVEL: 'debug',
      DATABASE_URL: databaseUrl,
      DISPATCHER_PORT: String(port),
      DATA_DIR: dataDir,
      SECRET_ENCRYPTION_KEY: TEST_SECRET_KEY.toString('base64'),
      ALLOW_PRIVATE_TARGETS: 'true',
      ...env,
    },
    onOutput: (chunk, stream) => {
      output += chunk;
      if (options.onOutput) options.onOutput(chunk, stream);
      else if (stream === 'stderr') process.stderr.write(chunk);
      if (stream !== 'stdout') return;
      const parts = (pending + chunk).split('\n');
      pending = parts.pop()!;
      for (const line of parts) {
        if (!line.startsWith('{')) continue;
        try {
          logs.push(JSON.parse(line) as Record<string, unknown>);
        } catch {
          // not a log line
        }
      }
    },
  });
  void child.exited.then(() => rmSync(dataDir, { recursive: true, force: true }));
  const dispatcher: DispatcherProcess = {
    ...child,
    port,
    logs,
    get output() {
      return output;
    },
  };
  try {
    await waitForHealthy(`http://127.0.0.1:${port}/healthz`, child, options.timeoutMs ?? 30_000);
  } catch (error) {
    // it never took work: nothing to finish
    child.process.kill('SIGKILL');
    await child.exited;
    // a dispatcher that died at start-up (bad config) will never listen
    if (child.process.exitCode !== null)
      throw new Error(`the dispatcher exited at start-up with ${child.process.exitCode}`);
    throw error;
  }
  return dispatcher;
}
