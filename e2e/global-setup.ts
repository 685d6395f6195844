/**
 * Starts the whole stack for the suite, as `pnpm start` runs it (scripts/start.ts: migrate, seed
 * the demo accounts, API with the admin UI at /admin, dispatcher), on a fresh database, free
 * ports and a fast retry schedule, plus the local webhook target. Returns the teardown, which
 * stops all of it and removes what the run created.
 *
 * Database: with DATABASE_URL, a new database `e2e_<random>` on that server (dropped at the end);
 * without, a new embedded cluster in `.data/e2e-<random>` (removed at the end), beside the
 * developer's `.data/postgres`.
 */
import { spawnSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import {
  createWriteStream,
  existsSync,
  mkdirSync,
  readdirSync,
  readFileSync,
  rmSync,
  statSync,
} from 'node:fs';
import { createServer } from 'node:net';
import { join } from 'node:path';
import { adminQuery, freePort, ROOT, spawnNode, withDatabase, waitForHealthy } from '@platform/testkit';
import { startWebhookTarget, type WebhookTargetServer } from './fixtures/webhook-target';

const resultsDir = join(import.meta.dirname, 'test-results');

/** Seven attempts (docs/webhooks.md#retries) that all fall due within a couple of seconds. */
const RETRY_SCHEDULE = '0s,200ms,200ms,200ms,200ms,200ms,200ms';
/**
 * The stack's breaker threshold (consecutive target failures of one endpoint): above the 21 that
 * the most failing specs send to theirs (three webhooks, seven attempts each), so every attempt
 * of theirs is a request; a spec that wants the breaker open sends more (console-breaker-skips).
 */
const BREAKER_FAILURES = 24;
/** A start on a loaded 2-core CI machine (initdb, migrations, seed, tsx) takes a while. */
const START_TIMEOUT_MS = 240_000;
const STOP_TIMEOUT_MS = 60_000;

async function portIsFree(port: number): Promise<boolean> {
  return new Promise((resolveFree) => {
    const server = createServer();
    server.once('error', () => resolveFree(false));
    server.listen(port, '127.0.0.1', () => server.close(() => resolveFree(true)));
  });
}

function postmasterRunning(clusterDir: string): boolean {
  try {
    const pid = Number(readFileSync(join(clusterDir, 'postmaster.pid'), 'utf8').split('\n')[0]);
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

/** Removes what runs that were killed before their teardown left in .data (a day old, Postgres down). */
function removeStaleRunDirs(): void {
  const dataRoot = join(ROOT, '.data');
  for (const name of existsSync(dataRoot) ? readdirSync(dataRoot) : []) {
    const dir = join(dataRoot, name);
    if (!/^e2e-[0-9a-f]{8}$/.test(name) || Date.now() - statSync(dir).mtimeMs < 86_400_000) continue;
    if (!postmasterRunning(join(dir, 'postgres'))) rmSync(dir, { recursive: true, force: true });
  }
}

/** Builds the admin UI from the current sources, so the suite never tests a stale build. */
function buildAdmin(outDir: string): void {
  const vite = join(ROOT, 'apps/admin/node_modules/vite/bin/vite.js');
  const result = spawnSync(
    process.execPath,
    [vite, 'build', '--logLevel', 'error', '--outDir', outDir, '--emptyOutDir'],
    { cwd: join(ROOT, 'apps/admin'), stdio: 'inherit' },
  );
  if (result.status !== 0) throw new Error(`The admin UI did not build (vite exited ${result.status})`);
}

export default async function globalSetup(): Promise<() => Promise<void>> {
  const runId = randomBytes(4).toString('hex');
  const dataDir = join(ROOT, '.data', `e2e-${runId}`);
  const logFile = join(resultsDir, 'stack.log');
  const cleanups: (() => Promise<void>)[] = [];
  const teardown = async () => {
    for (const cleanup of cleanups.splice(0).reverse()) {
      await cleanup().catch((error: unknown) => console.error('[e2e] teardown step failed:', error));
    }
  };

  try {
    const started = Date.now();
    removeStaleRunDirs();
    mkdirSync(resultsDir, { recursive: true });
    mkdirSync(dataDir, { recursive: true });
    cleanups.push(async () => rmSync(dataDir, { recursive: true, force: true }));

    const adminDist = join(dataDir, 'admin');
    buildAdmin(adminDist);

    const ports = { api: await freePort(), dispatcher: await freePort(), postgres: await freePort() };
    // on top of this process's environment; undefined leaves a variable unset
    const env: Record<string, string | undefined> = {
      NODE_ENV: 'development',
      LOG_LEVEL: process.env.E2E_LOG_LEVEL ?? 'info',
      API_HOST: '127.0.0.1',
      API_PORT: String(ports.api),
      DISPATCHER_PORT: String(ports.dispatcher),
      DATA_DIR: dataDir,
      ADMIN_DIST_DIR: adminDist,
      // the target is on 127.0.0.1
      ALLOW_PRIVATE_TARGETS: 'true',
      WEBHOOK_RETRY_SCHEDULE: RETRY_SCHEDULE,
      // the breaker is per endpoint (party + URL) and every test's target is an endpoint of its
      // own; the threshold lets no other spec's target open it (at most 21 consecutive failures,
      // three failing webhooks' seven attempts) and lets a spec that sends more see it open
      // (README › What a run does)
      DISPATCHER_BREAKER_FAILURES: String(BREAKER_FAILURES),
      // deliveries the target holds (see fixtures/webhook-target.ts) are released well within this
      WEBHOOK_TIMEOUT: '60s',
      // NOTIFY and the next due time wake the dispatcher; this only bounds a missed wake-up
      DISPATCHER_POLL_INTERVAL: '1s',
      // the seed's default password, which the tests sign in with
      DEMO_PASSWORD: undefined,
      // no echo target, demo registrations or trickle: the tests count their own webhooks
      DEMO: 'false',
    };
    const serverUrl = process.env.DATABASE_URL;
    if (serverUrl) {
      const database = `e2e_${runId}`;
      await adminQuery(serverUrl, `create database ${database}`);
      cleanups.push(() => adminQuery(serverUrl, `drop database if exists ${database} with (force)`));
      env.DATABASE_URL = withDatabase(serverUrl, database);
    } else {
      env.DATABASE_URL = undefined;
      env.EMBEDDED_POSTGRES_PORT = String(ports.postgres);
    }

    const target: WebhookTargetServer = await startWebhookTarget();
    const log = createWriteStream(logFile, { flags: 'a' });
    const stack = spawnNode('scripts/start.ts', {
      env,
      label: `the stack (log: ${logFile})`,
      onOutput: (chunk) => log.write(chunk),
    });
    cleanups.push(async () => {
      await stack.stop(STOP_TIMEOUT_MS);
      log.end();
      const busy = [];
      for (const port of Object.values(ports)) if (!(await portIsFree(port))) busy.push(port);
      if (busy.length) console.warn(`[e2e] ports still in use after the stack stopped: ${busy.join(', ')}`);
    });
    // closed before the stack stops (cleanups run in reverse): it answers deliveries it holds,
    // so the dispatcher's shutdown does not wait for them
    cleanups.push(() => target.close());

    const api = `http://127.0.0.1:${ports.api}`;
    await Promise.all(
      [`${api}/healthz`, `${api}/admin/`, `http://127.0.0.1:${ports.dispatcher}/healthz`].map((url) =>
        waitForHealthy(url, stack, START_TIMEOUT_MS),
      ),
    );

    // read by the config (baseURL) and the fixtures in the workers, which inherit this environment
    process.env.E2E_BASE_URL = api;
    process.env.E2E_TARGET_ORIGIN = target.origin;
    process.env.E2E_DISPATCHER_URL = `http://127.0.0.1:${ports.dispatcher}`;
    process.env.E2E_BREAKER_FAILURES = String(BREAKER_FAILURES);
    console.log(
      `[e2e] stack up in ${((Date.now() - started) / 1000).toFixed(1)} s: API ${api}, target ${target.origin}, ` +
        `${serverUrl ? `database e2e_${runId}` : `embedded Postgres in .data/e2e-${runId}`}; log ${logFile}`,
    );
    return teardown;
  } catch (error) {
    await teardown();
    throw error;
  }
}
