import { spawn, type ChildProcess } from 'node:child_process';
import { accessSync, chmodSync, constants, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { delimiter, join } from 'node:path';
import pg from 'pg';
import { freePort } from './ports';
import { eventually } from './wait';

/**
 * The pgbouncer binary: where Debian's `pgbouncer` package puts it, or the first on PATH. The test
 * kit installs nothing (`.ci/run` installs the package), so a missing binary throws, naming it.
 */
export function pgBouncerPath(): string {
  const folders = ['/usr/sbin', '/usr/bin', ...(process.env.PATH ?? '').split(delimiter)];
  for (const folder of folders) {
    const file = join(folder, 'pgbouncer');
    try {
      accessSync(file, constants.X_OK);
      return file;
    } catch {
      // not here
    }
  }
  throw new Error(
    "pgbouncer is not installed: install Debian's `pgbouncer` package (`apt-get install pgbouncer`, as .ci/run does)",
  );
}

export type PoolMode = 'session' | 'transaction';

/** A pgbouncer process of a test, in front of one Postgres server. */
export interface PgBouncer {
  port: number;
  /** URL of `database` through the pooler, pooled in `mode` (each database has an entry per mode). */
  url(database: string, mode: PoolMode): string;
  /** Its log so far, for an error message. */
  output(): string;
  stop(): Promise<void>;
}

/**
 * Starts pgbouncer (`path`, from `pgBouncerPath`) on a free 127.0.0.1 port with a config file in
 * a temporary folder, in front of the server of `serverUrl`. Each of `databases` gets two entries:
 * `<name>` pooled per transaction and `<name>_session` pooled per session, both logging in to the
 * server as `serverUrl`'s user (`auth_type = any`: the client's user name and password are not
 * checked, which suits a test on 127.0.0.1 only). `ignore_startup_parameters = options`: the
 * pools' session settings (`-c jit=off`, see createKnex) are dropped, as docs/dispatcher.md ›
 * Behind PgBouncer says to configure it. As root it runs as `nobody` (pgbouncer refuses root).
 */
export async function startPgBouncer(
  path: string,
  serverUrl: string,
  databases: string[],
): Promise<PgBouncer> {
  const server = new URL(serverUrl);
  const port = await freePort();
  const folder = mkdtempSync(join(tmpdir(), 'pgbouncer-test-'));
  const login = [
    `host=${server.hostname}`,
    `port=${server.port || 5432}`,
    `user=${decodeURIComponent(server.username || 'postgres')}`,
    ...(server.password ? [`password=${decodeURIComponent(server.password)}`] : []),
  ].join(' ');
  const entries = databases.flatMap((name) => [
    `${name} = ${login} dbname=${name} pool_mode=transaction`,
    `${name}_session = ${login} dbname=${name} pool_mode=session`,
  ]);
  const config = join(folder, 'pgbouncer.ini');
  writeFileSync(
    config,
    [
      '[databases]',
      ...entries,
      '[pgbouncer]',
      'listen_addr = 127.0.0.1',
      `listen_port = ${port}`,
      // no Unix socket: parallel test runs would fight over /tmp/.s.PGSQL.<port>
      'unix_socket_dir =',
      'auth_type = any',
      'pool_mode = transaction',
      'ignore_startup_parameters = options',
      'max_client_conn = 200',
      'default_pool_size = 20',
      'server_check_delay = 0',
    ].join('\n') + '\n',
  );
  // read by the unprivileged user pgbouncer becomes
  chmodSync(folder, 0o755);
  chmodSync(config, 0o644);
  const root = process.getuid?.() === 0;
  const child: ChildProcess = spawn(path, [...(root ? ['-u', 'nobody'] : []), config], {
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let log = '';
  child.stdout!.on('data', (chunk: Buffer) => (log += chunk.toString()));
  child.stderr!.on('data', (chunk: Buffer) => (log += chunk.toString()));
  const exited = new Promise<void>((done) => child.once('exit', () => done()));
  const url = (database: string, mode: PoolMode) => {
    const through = new URL(serverUrl);
    through.hostname = '127.0.0.1';
    through.port = String(port);
    through.pathname = `/${mode === 'session' ? `${database}_session` : database}`;
    return through.toString();
  };
  const stop = async () => {
    if (child.exitCode === null && child.signalCode === null) {
      child.kill('SIGTERM');
      await exited;
    }
    rmSync(folder, { recursive: true, force: true });
  };
  try {
    // ready once a query goes through it
    await eventually(
      async () => {
        const client = new pg.Client({ connectionString: url(databases[0]!, 'transaction') });
        await client.connect();
        try {
          await client.query('select 1');
        } finally {
          await client.end();
        }
        return true;
      },
      {
        timeoutMs: 10_000,
        what: 'pgbouncer answering queries',
        watch: {
          gone: () => (child.exitCode === null ? undefined : `pgbouncer exited with ${child.exitCode}`),
        },
      },
    );
  } catch (error) {
    await stop();
    throw new Error(`${(error as Error).message}\n${log}`);
  }
  return { port, url, output: () => log, stop };
}
