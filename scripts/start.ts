/**
 * `pnpm start`: the whole stack in one command. Uses DATABASE_URL, or an embedded Postgres in
 * .data/postgres; migrates, seeds the demo data, then runs the API and the dispatcher as child
 * processes until SIGINT/SIGTERM, and stops them (and the embedded Postgres) in order. Both run
 * as production does: their bundles (built here, a second each) under plain Node with the flags
 * of their `start` scripts.
 */
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { existsSync } from 'node:fs';
import { join, relative, resolve } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import {
  DEFAULT_DEMO_PASSWORD,
  DEMO_ACCOUNTS,
  DEMO_REGISTRATIONS,
  DEMO_BREAKER_FAILURES,
  DEMO_RETRY_SCHEDULE,
  demoEnabled,
  seedDemoData,
  seedDemoRegistrations,
} from './demo-seed';
import { createKnex, migrate } from '../packages/db/src/index';
import { createSecretBox, resolvePrivateKeyPem, resolveSecretKey } from '../packages/crypto/src/index';
import { startTrickle } from './demo-trickle';
import {
  buildBundle,
  bundleFile,
  productionNodeFlags,
  type BundledApp,
} from '../packages/testkit/src/bundle';

const root = resolve(import.meta.dirname, '..');
const env = process.env;
// DATA_DIR (as the API and dispatcher read it) also moves the embedded cluster and the JWT key,
// so a second stack (the e2e suite's) runs beside a developer's without sharing either.
const dataDir = env.DATA_DIR || '.data';
const settings = {
  databaseUrl: env.DATABASE_URL || undefined,
  embeddedPort: port('EMBEDDED_POSTGRES_PORT', 54329),
  embeddedDir: resolve(root, dataDir, 'postgres'),
  apiPort: port('API_PORT', 3000),
  dispatcherPort: port('DISPATCHER_PORT', 3001),
  // the echo target, the demo registrations and the trickle of changes (never in production)
  demo: demoEnabled(env),
  echoPort: port('ECHO_TARGET_PORT', 3002),
  demoPassword: env.DEMO_PASSWORD || DEFAULT_DEMO_PASSWORD,
  keyFile: resolve(root, env.JWT_PRIVATE_KEY_FILE || join(dataDir, 'keys/jwt-private.pem')),
  secretKeyFile: resolve(root, env.SECRET_ENCRYPTION_KEY_FILE || join(dataDir, 'keys/secret.key')),
  // the API serves this folder at /admin (its ADMIN_DIST_DIR)
  adminDistDir: env.ADMIN_DIST_DIR ? resolve(root, env.ADMIN_DIST_DIR) : join(root, 'apps/admin/dist'),
};

function port(name: string, fallback: number): number {
  const value = Number(env[name] || fallback);
  if (!Number.isInteger(value) || value < 1 || value > 65535) {
    console.error(`${name} must be a port number, not "${env[name]}"`);
    process.exit(2);
  }
  return value;
}

const children = new Map<string, { process: ChildProcess; exited: Promise<void> }>();
let stopDatabase = async () => {};
let stopTrickle = () => {};
let stopping = false;

/** Stops the children (SIGTERM, then SIGKILL after a grace period), then the database, then exits. */
async function shutdown(code: number): Promise<never> {
  if (!stopping) {
    stopping = true;
    // in order: the demo's writes, then the apps (each finishes what it holds and closes its
    // pool), then Postgres, which is in a process group of its own (packages/db/src/embedded.ts)
    // so a Ctrl-C to the terminal's group does not stop it under the apps
    stopTrickle();
    for (const child of children.values()) child.process.kill('SIGTERM');
    const graceOver = sleep(15_000).then(() => {
      for (const child of children.values()) child.process.kill('SIGKILL');
    });
    await Promise.race([Promise.all([...children.values()].map((c) => c.exited)), graceOver]);
    await stopDatabase().catch((error: unknown) => console.error('stopping Postgres failed:', error));
    process.exit(code);
  }
  return new Promise<never>(() => {}); // the first caller exits
}

/** Starts the embedded cluster and returns the URL of its `platform` database. */
async function startEmbedded(): Promise<string> {
  // embedded-postgres registers SIGINT/SIGTERM hooks that stop Postgres and exit at once, under
  // the children still shutting down; this script stops things in order itself, so those go.
  const signals = ['SIGINT', 'SIGTERM', 'SIGHUP'] as const;
  const before = new Map(signals.map((signal) => [signal, new Set(process.listeners(signal))]));
  const { startEmbeddedPostgres } = await import('../packages/db/src/embedded');
  for (const signal of signals)
    for (const listener of process.listeners(signal))
      if (!before.get(signal)!.has(listener)) process.off(signal, listener);

  const shownDir = relative(root, settings.embeddedDir) || settings.embeddedDir;
  console.log(`Starting embedded Postgres (${shownDir}, port ${settings.embeddedPort})…`);
  const cluster = await startEmbeddedPostgres({ dataDir: settings.embeddedDir, port: settings.embeddedPort });
  stopDatabase = async () => {
    // Ctrl-C signals the whole process group, so Postgres may already be down; its stop() would
    // then wait forever for an exit event that has already fired.
    if (!existsSync(join(settings.embeddedDir, 'postmaster.pid'))) return;
    await Promise.race([cluster.stop(), sleep(15_000)]);
  };
  const admin = createKnex(cluster.url, { pool: { max: 1 }, applicationName: 'platform-start' });
  try {
    const found = await admin('pg_database').where('datname', 'platform').first('datname');
    if (!found) await admin.raw('create database platform');
  } finally {
    await admin.destroy();
  }
  const url = new URL(cluster.url);
  url.pathname = '/platform';
  return url.toString();
}

/** Runs an app's bundle as its `start` script does (or a script under tsx), as a direct child so signals reach it. */
function startChild(
  name: BundledApp | 'echo-target',
  childEnv: NodeJS.ProcessEnv,
  args = [...productionNodeFlags(name as BundledApp), bundleFile(name as BundledApp)],
): void {
  const child = spawn(process.execPath, args, {
    cwd: root,
    env: childEnv,
    stdio: 'inherit',
  });
  const exited = new Promise<void>((resolveExit) =>
    child.once('exit', (code, signal) => {
      resolveExit();
      if (stopping) return;
      console.error(`${name} exited unexpectedly (${signal ?? `code ${code}`}); stopping everything.`);
      void shutdown(1);
    }),
  );
  children.set(name, { process: child, exited });
}

/** Builds the admin SPA that the API serves at /admin when no build exists yet. */
function buildAdminIfMissing(): void {
  if (existsSync(join(settings.adminDistDir, 'index.html'))) return;
  console.log('Building the admin UI (first start only)…');
  const vite = join(root, 'apps/admin/node_modules/vite/bin/vite.js');
  const outDir = ['--outDir', settings.adminDistDir, '--emptyOutDir'];
  const result = spawnSync(process.execPath, [vite, 'build', '--logLevel', 'warn', ...outDir], {
    cwd: join(root, 'apps/admin'),
    stdio: 'inherit',
  });
  if (result.status !== 0) console.error('The admin UI did not build; /admin will answer 404.');
}

/** Resolves once `url` answers 200, or after `timeoutMs` (the banner then comes anyway). */
async function waitForHealthy(url: string, timeoutMs = 60_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline && !stopping) {
    if ((await fetch(url).catch(() => undefined))?.status === 200) return;
    await sleep(200);
  }
}

/** The dispatcher's retry schedule: the user's, else the demo's fast one while the demo runs. */
function demoSchedule(): string {
  return env.WEBHOOK_RETRY_SCHEDULE || DEMO_RETRY_SCHEDULE;
}

function printBanner(): void {
  const api = `http://127.0.0.1:${settings.apiPort}`;
  const database = settings.databaseUrl
    ? 'DATABASE_URL'
    : `embedded Postgres in ${relative(root, settings.embeddedDir)}, port ${settings.embeddedPort}`;
  const password = env.DEMO_PASSWORD ? 'the value of DEMO_PASSWORD' : DEFAULT_DEMO_PASSWORD;
  const emailWidth = Math.max(...DEMO_ACCOUNTS.map((a) => a.email.length)) + 2;
  const partyWidth = Math.max(...DEMO_ACCOUNTS.map((a) => a.party.length)) + 2;
  console.log(
    [
      '',
      'The platform is running.',
      `  API          ${api}`,
      `  API docs     ${api}/docs`,
      `  OpenAPI      ${api}/api/openapi.json`,
      `  JWKS         ${api}/.well-known/jwks.json`,
      `  Dispatcher   http://127.0.0.1:${settings.dispatcherPort}/healthz (and /metrics)`,
      `  Database     ${database}`,
      `  Admin        ${api}/admin (the operator console)`,
      ...(settings.demo
        ? [
            `  Echo target  http://127.0.0.1:${settings.echoPort} (demo webhook receiver, logs each delivery)`,
            '',
            'Demo: a change a second through the API as manager@example.com (pnpm demo alone);',
            ...DEMO_REGISTRATIONS.map((r) => `  registration ${r.path}: ${r.description}`),
            `  retry schedule ${demoSchedule()} (WEBHOOK_RETRY_SCHEDULE sets another; DEMO=false: no demo)`,
          ]
        : []),
      '',
      `Demo logins (password: ${password}):`,
      ...DEMO_ACCOUNTS.map(
        (a) => `  ${a.email.padEnd(emailWidth)}${a.party.padEnd(partyWidth)}${a.description}`,
      ),
      '',
      'Stop with Ctrl-C.',
      '',
    ].join('\n'),
  );
}

async function main(): Promise<void> {
  // SIGHUP too (a closed terminal): Postgres takes it as "reload config" and would live on.
  for (const signal of ['SIGINT', 'SIGTERM', 'SIGHUP'] as const) process.on(signal, () => void shutdown(0));
  // pnpm and npm exit on SIGTERM without passing it on; a stack orphaned that way stops itself
  const launcher = process.ppid;
  setInterval(() => process.ppid !== launcher && void shutdown(0), 500).unref();

  const databaseUrl = settings.databaseUrl ?? (await startEmbedded());
  const knex = createKnex(databaseUrl, { pool: { max: 2 }, applicationName: 'platform-start' });
  try {
    await migrate(knex);
    await seedDemoData(knex, { password: settings.demoPassword });
  } finally {
    await knex.destroy();
  }
  // Created here, before either child starts, so the API signs with the key the dispatcher reads.
  resolvePrivateKeyPem({
    pem: env.JWT_PRIVATE_KEY,
    file: settings.keyFile,
    production: env.NODE_ENV === 'production',
  });
  // likewise the key sealing secrets at rest: the API seals with it, the dispatcher opens
  const secretKey = resolveSecretKey({
    key: env.SECRET_ENCRYPTION_KEY,
    file: settings.secretKeyFile,
    production: env.NODE_ENV === 'production',
  });
  let echoSecrets: string[] = [];
  if (settings.demo) {
    const demoKnex = createKnex(databaseUrl, { pool: { max: 1 }, applicationName: 'platform-start' });
    try {
      echoSecrets = await seedDemoRegistrations(demoKnex, {
        echoOrigin: `http://127.0.0.1:${settings.echoPort}`,
        secrets: createSecretBox(secretKey),
      });
    } finally {
      await demoKnex.destroy();
    }
  }
  if (stopping) return;
  buildAdminIfMissing();
  if (stopping) return;

  const childEnv = {
    ...env,
    ADMIN_DIST_DIR: settings.adminDistDir,
    DATABASE_URL: databaseUrl,
    JWT_PRIVATE_KEY_FILE: settings.keyFile,
    SECRET_ENCRYPTION_KEY_FILE: settings.secretKeyFile,
  };
  await Promise.all([buildBundle('api'), buildBundle('dispatcher')]);
  if (stopping) return;
  startChild('api', childEnv);
  startChild(
    'dispatcher',
    settings.demo
      ? {
          ...childEnv,
          WEBHOOK_RETRY_SCHEDULE: demoSchedule(),
          DISPATCHER_BREAKER_FAILURES: env.DISPATCHER_BREAKER_FAILURES || DEMO_BREAKER_FAILURES,
        }
      : childEnv,
  );
  if (settings.demo) {
    const echoEnv = {
      ...env,
      ECHO_TARGET_PORT: String(settings.echoPort),
      ECHO_TARGET_SECRETS: JSON.stringify(echoSecrets),
    };
    startChild('echo-target', echoEnv, ['--import', 'tsx', join(root, 'scripts/echo-target.ts')]);
  }
  await Promise.all([
    waitForHealthy(`http://127.0.0.1:${settings.apiPort}/healthz`),
    waitForHealthy(`http://127.0.0.1:${settings.dispatcherPort}/healthz`),
  ]);
  if (stopping) return;
  printBanner();
  if (settings.demo)
    stopTrickle = startTrickle({
      apiUrl: `http://127.0.0.1:${settings.apiPort}`,
      password: settings.demoPassword,
    });
}

main().catch(async (error: unknown) => {
  console.error(error instanceof Error ? error.message : error);
  await shutdown(1);
});
