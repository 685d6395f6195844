import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { bundleFile, buildBundle, productionNodeFlags } from './bundle';
import { freePort } from './ports';
import { spawnNode, waitForHealthy, type NodeProcess, type SpawnOptions } from './processes';
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
  const [port] = await Promise.all([freePort(), options.bundle ? buildBundle('dispatcher') : undefined]);
  const dataDir = mkdtempSync(join(tmpdir(), 'dispatcher-test-'));
  const logs: Record<string, unknown>[] = [];
  let output = '';
  let pending = '';
  const child = spawnNode(options.bundle ? bundleFile('dispatcher') : 'apps/dispatcher/src/main.ts', {
    label: 'dispatcher',
    nodeFlags: options.bundle ? productionNodeFlags('dispatcher') : [],
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

/**
 * The sum of every sample of `name` whose label set contains `labels` (e.g. `reason="circuit-open"`)
 * in a Prometheus text scrape (a dispatcher's `GET /metrics`); 0 when there is none.
 */
export function metricSum(scrape: string, name: string, labels = ''): number {
  return scrape
    .split('\n')
    .filter((line) => line.startsWith(`${name}{`) || line.startsWith(`${name} `))
    .filter((line) => line.includes(labels))
    .reduce((sum, line) => sum + Number(line.slice(line.lastIndexOf(' ') + 1)), 0);
}
