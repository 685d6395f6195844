import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { bundleFile, buildBundle, productionNodeFlags } from './bundle';
import type { StartDispatcherOptions } from './dispatcher';
import { freePort } from './ports';
import { spawnNode, waitForHealthy, type NodeProcess } from './processes';
import { TEST_SECRET_KEY } from './seed';

/** The real API as a child process. */
export interface ApiProcess extends NodeProcess {
  /** Its base URL on 127.0.0.1. */
  url: string;
}

/** The dispatcher's options (`bundle`: apps/api/dist/main.mjs, built once per process), and more. */
export interface StartApiOptions extends StartDispatcherOptions {
  /** Another entry file instead (a bundle built elsewhere, to compare two builds). */
  entry?: string;
  /** Node flags instead of production's (to compare, say, heap settings). */
  nodeFlags?: string[];
}

/**
 * Spawns the real API (`main.ts`, or its bundle) against `databaseUrl` on a free 127.0.0.1 port,
 * sharing TEST_SECRET_KEY with `seedRegistration`, with its own data folder (a JWT key it
 * generates never lands in the developer's .data) and `env` on top; a variable given as
 * undefined is left unset. Resolves once /healthz answers 200.
 */
export async function startApi(
  databaseUrl: string,
  env: Record<string, string | undefined> = {},
  options: StartApiOptions = {},
): Promise<ApiProcess> {
  const [port] = await Promise.all([freePort(), options.bundle ? buildBundle('api') : undefined]);
  const dataDir = mkdtempSync(join(tmpdir(), 'api-test-'));
  const bundled = options.bundle || options.entry?.endsWith('.mjs');
  const child = spawnNode(options.entry ?? (options.bundle ? bundleFile('api') : 'apps/api/src/main.ts'), {
    label: 'api',
    nodeFlags: options.nodeFlags ?? (bundled ? productionNodeFlags('api') : []),
    env: {
      NODE_ENV: 'test',
      LOG_LEVEL: 'warn',
      DATABASE_URL: databaseUrl,
      API_HOST: '127.0.0.1',
      API_PORT: String(port),
      DATA_DIR: dataDir,
      SECRET_ENCRYPTION_KEY: TEST_SECRET_KEY.toString('base64'),
      ...env,
    },
    onOutput: (chunk, stream) => {
      if (options.onOutput) options.onOutput(chunk, stream);
      else if (stream === 'stderr') process.stderr.write(chunk);
    },
  });
  void child.exited.then(() => rmSync(dataDir, { recursive: true, force: true }));
  const url = `http://127.0.0.1:${port}`;
  try {
    await waitForHealthy(`${url}/healthz`, child, options.timeoutMs ?? 30_000);
  } catch (error) {
    child.process.kill('SIGKILL');
    await child.exited;
    throw error;
  }
  return { ...child, url };
}
