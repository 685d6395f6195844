import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { freePort } from './ports';
import { spawnNode, waitForHealthy, type NodeProcess } from './processes';
import { TEST_SECRET_KEY } from './seed';

/** The real API as a child process. */
export interface ApiProcess extends NodeProcess {
  /** `http://127.0.0.1:<port>`. */
  url: string;
}

/**
 * Spawns the real API (apps/api/src/main.ts, its own createKnex pool on `databaseUrl`) on a free
 * 127.0.0.1 port, sharing TEST_SECRET_KEY with `startDispatcher` and `seedRegistration`, private
 * targets allowed, its keys in a data folder of its own, and `env` on top. Resolves once
 * /healthz answers.
 */
export async function startApiProcess(
  databaseUrl: string,
  env: Record<string, string | undefined> = {},
): Promise<ApiProcess> {
  const port = await freePort();
  const dataDir = mkdtempSync(join(tmpdir(), 'api-test-'));
  const child = spawnNode('apps/api/src/main.ts', {
    label: 'api',
    env: {
      NODE_ENV: 'test',
      LOG_LEVEL: 'warn',
      DATABASE_URL: databaseUrl,
      API_PORT: String(port),
      API_HOST: '127.0.0.1',
      DATA_DIR: dataDir,
      SECRET_ENCRYPTION_KEY: TEST_SECRET_KEY.toString('base64'),
      ALLOW_PRIVATE_TARGETS: 'true',
      ...env,
    },
  });
  void child.exited.then(() => rmSync(dataDir, { recursive: true, force: true }));
  const url = `http://127.0.0.1:${port}`;
  await waitForHealthy(`${url}/healthz`, child);
  return { ...child, url };
}
