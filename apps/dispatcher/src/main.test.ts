import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import {
  createTestDatabase,
  eventually,
  freePort,
  sendRawRequest,
  type TestDatabase,
} from '@platform/testkit';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadConfig } from './config';
import { LISTENER_APPLICATION_NAME } from './listener';
import { createStatusServer } from './server';

const ROOT = resolve(import.meta.dirname, '../../..');

describe('the dispatcher process', () => {
  let db: TestDatabase;
  let port: number;
  let child: ChildProcess;
  let exited: Promise<number | null>;
  let dataDir: string;
  const lines: string[] = [];

  const get = (path: string) => fetch(`http://127.0.0.1:${port}${path}`);
  const notificationsTotal = async () => {
    const text = await (await get('/metrics')).text();
    return Number(/^dispatcher_notifications_total (\d+)$/m.exec(text)?.[1] ?? NaN);
  };
  const logged = (msg: string) => lines.some((line) => JSON.parse(line).msg === msg);

  beforeAll(async () => {
    db = await createTestDatabase();
    port = await freePort();
    // No key is given, so it finds (or generates) both in DATA_DIR: a folder of this file's own,
    // never the developer's .data, whose keys other processes and tests rely on.
    dataDir = mkdtempSync(join(tmpdir(), 'dispatcher-main-test-'));
    const env: Record<string, string | undefined> = {
      ...process.env,
      NODE_ENV: 'test',
      DATABASE_URL: db.url,
      DISPATCHER_PORT: String(port),
      LOG_LEVEL: 'debug',
      DATA_DIR: dataDir,
    };
    for (const name of [
      'JWT_PRIVATE_KEY',
      'JWT_PRIVATE_KEY_FILE',
      'SECRET_ENCRYPTION_KEY',
      'SECRET_ENCRYPTION_KEY_FILE',
    ]) {
      delete env[name];
    }
    child = spawn(resolve(ROOT, 'node_modules/.bin/tsx'), ['apps/dispatcher/src/main.ts'], {
      cwd: ROOT,
      env,
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    // 'close' comes after stdout is drained, so the last log lines are in by then
    exited = new Promise((resolveExit) => child.once('close', (code) => resolveExit(code)));
    let pending = '';
    child.stdout!.on('data', (chunk: Buffer) => {
      const parts = (pending + chunk.toString()).split('\n');
      pending = parts.pop()!;
      lines.push(...parts.filter((line) => line.startsWith('{')));
    });
    child.stderr!.on('data', (chunk: Buffer) => process.stderr.write(chunk));
  });

  afterAll(async () => {
    // SIGTERM first: tsx relays it, while a SIGKILLed tsx would orphan the dispatcher under it
    if (child.exitCode === null) {
      child.kill('SIGTERM');
      await Promise.race([exited, new Promise((r) => setTimeout(r, 5_000))]);
      if (child.exitCode === null) child.kill('SIGKILL');
    }
    await db.drop();
    rmSync(dataDir, { recursive: true, force: true });
  });

  it('reports healthy once it listens', async () => {
    await eventually(async () => (await get('/healthz')).status === 200);
    expect(await (await get('/healthz')).json()).toEqual({
      status: 'ok',
      listening: true,
      loop: 'running',
      inFlight: 0,
      runtime: { node: process.version },
    });
    const metrics = await get('/metrics');
    expect(metrics.headers.get('content-type')).toMatch(/^text\/plain; version=0\.0\.4/);
    expect(await metrics.text()).toMatch(/^dispatcher_up 1$/m);
    // the keys it had none of were made in its own data folder
    expect(existsSync(join(dataDir, 'keys', 'jwt-private.pem'))).toBe(true);
    expect(existsSync(join(dataDir, 'keys', 'secret.key'))).toBe(true);
  });

  it('counts each wake-up notification', async () => {
    const before = await notificationsTotal();
    await db.knex.raw(`select pg_notify('webhook_due', '')`);
    await eventually(async () => (await notificationsTotal()) === before + 1);
    // logged at debug; the line may reach us after the metrics answer
    await eventually(() =>
      lines.some((line) => {
        const entry = JSON.parse(line);
        return entry.msg === 'wake-up' && entry.reason === 'notification' && entry.level === 20;
      }),
    );
  });

  it('listens again after its connection is killed', async () => {
    await db.knex.raw(
      `select pg_terminate_backend(pid) from pg_stat_activity
        where application_name = ? and datname = current_database()`,
      [LISTENER_APPLICATION_NAME],
    );
    await eventually(() => logged('LISTEN connection lost; reconnecting'));
    await eventually(async () => (await get('/healthz')).status === 200);
    const before = await notificationsTotal();
    await db.knex.raw(`select pg_notify('webhook_due', '')`);
    await eventually(async () => (await notificationsTotal()) === before + 1);
  });

  it('stops on SIGTERM with exit code 0', async () => {
    child.kill('SIGTERM');
    expect(await exited).toBe(0);
    expect(logged('stopped')).toBe(true);
  });
});

describe('the status server', () => {
  it('answers 503 while not listening', async () => {
    const server = createStatusServer({
      health: () => ({ listening: false, loop: 'running', inFlight: 0 }),
      metrics: async () =>
        '# TYPE dispatcher_notifications_total counter\ndispatcher_notifications_total 7\n',
    });
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    const base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    try {
      const health = await fetch(`${base}/healthz`);
      expect(health.status).toBe(503);
      expect(await health.json()).toEqual({
        status: 'unavailable',
        listening: false,
        loop: 'running',
        inFlight: 0,
        runtime: { node: process.version },
      });
      const metrics = await (await fetch(`${base}/metrics`)).text();
      expect(metrics).toContain(
        '# TYPE dispatcher_notifications_total counter\ndispatcher_notifications_total 7\n',
      );
      expect((await fetch(`${base}/nope`)).status).toBe(404);
      expect((await fetch(`${base}/healthz`, { method: 'POST' })).status).toBe(405);
      const tooLarge = await sendRawRequest(
        base,
        `GET /healthz HTTP/1.1\r\nhost: x\r\nx-padding: ${'x'.repeat(17 * 1024)}\r\n\r\n`,
      );
      expect(tooLarge.status).toBe(431);
      expect(JSON.parse(tooLarge.body)).toMatchObject({ status: 431, type: 'https://httpstatuses.io/431' });
    } finally {
      await new Promise((r) => server.close(r));
    }
  });
});

describe('loadConfig', () => {
  it('applies the documented defaults', () => {
    const config = loadConfig({ DATABASE_URL: 'postgres://localhost/x' });
    expect(config).toMatchObject({
      DISPATCHER_PORT: 3001,
      WEBHOOK_RETRY_SCHEDULE: [0, 300_000, 900_000, 3_600_000, 21_600_000, 43_200_000, 86_400_000],
      WEBHOOK_TIMEOUT: 15_000,
      ALLOW_PRIVATE_TARGETS: true,
    });
    expect(config.DISPATCHER_ID).toMatch(new RegExp(`-${process.pid}$`));
  });

  it('refuses private targets by default only in production', () => {
    const base = { DATABASE_URL: 'postgres://localhost/x', NODE_ENV: 'production' };
    expect(loadConfig(base).ALLOW_PRIVATE_TARGETS).toBe(false);
    expect(loadConfig({ ...base, ALLOW_PRIVATE_TARGETS: 'true' }).ALLOW_PRIVATE_TARGETS).toBe(true);
    expect(
      loadConfig({ ...base, NODE_ENV: 'test', ALLOW_PRIVATE_TARGETS: 'false' }).ALLOW_PRIVATE_TARGETS,
    ).toBe(false);
  });

  it('caps deliveries per endpoint and per host, reading DISPATCHER_MAX_PER_TARGET as the former name', () => {
    const base = { DATABASE_URL: 'postgres://localhost/x', DISPATCHER_CONCURRENCY: '64' };
    // defaults: an endpoint may have every slot, a host four endpoints' worth, one connection per slot
    expect(loadConfig(base)).toMatchObject({
      MAX_PER_ENDPOINT: 64,
      MAX_PER_HOST: 256,
      CONNECTIONS_PER_ORIGIN: 64,
    });
    expect(loadConfig({ ...base, DISPATCHER_MAX_PER_ENDPOINT: '8' })).toMatchObject({
      MAX_PER_ENDPOINT: 8,
      MAX_PER_HOST: 32,
      CONNECTIONS_PER_ORIGIN: 32,
    });
    expect(loadConfig({ ...base, DISPATCHER_MAX_PER_TARGET: '8' })).toMatchObject({ MAX_PER_ENDPOINT: 8 });
    expect(
      loadConfig({
        ...base,
        DISPATCHER_MAX_PER_ENDPOINT: '8',
        DISPATCHER_MAX_PER_HOST: '12',
        DISPATCHER_CONNECTIONS_PER_ORIGIN: '20',
      }),
    ).toMatchObject({ MAX_PER_ENDPOINT: 8, MAX_PER_HOST: 12, CONNECTIONS_PER_ORIGIN: 20 });
    expect(() =>
      loadConfig({ ...base, DISPATCHER_MAX_PER_ENDPOINT: '8', DISPATCHER_MAX_PER_TARGET: '9' }),
    ).toThrow(/DISPATCHER_MAX_PER_TARGET: is the former name of DISPATCHER_MAX_PER_ENDPOINT/);
  });

  it('lists every bad variable at once', () => {
    expect(() =>
      loadConfig({ DISPATCHER_PORT: 'x', WEBHOOK_RETRY_SCHEDULE: '1s,soon', ALLOW_PRIVATE_TARGETS: 'yes' }),
    ).toThrow(
      /DATABASE_URL[\s\S]*DISPATCHER_PORT[\s\S]*WEBHOOK_RETRY_SCHEDULE: "soon" is not a duration[\s\S]*ALLOW_PRIVATE_TARGETS/,
    );
  });
});
