import { spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { existsSync, mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { freePort } from '@platform/testkit';
import { afterAll, describe, expect, it } from 'vitest';

// Ctrl-C in a terminal sends SIGINT to the whole foreground process group: `pnpm start`, its API
// and dispatcher, and (before) the embedded Postgres, which then terminated the apps' connections
// while they were still shutting down. The stack must stop in order and say nothing alarming.

const ROOT = resolve(import.meta.dirname, '..');
// under .data, as the e2e suite's clusters: as root, Postgres runs as `postgres`, which must reach it
// (a mkdtemp folder is private to its owner)
const dataDir = join(ROOT, '.data', `start-stop-${randomBytes(4).toString('hex')}`);
mkdirSync(dataDir, { recursive: true, mode: 0o755 });
afterAll(() => rmSync(dataDir, { recursive: true, force: true }));

describe('pnpm start', () => {
  it('stops in order, quietly, when SIGINT reaches its whole process group', async () => {
    // an admin build of one page, so the script does not build the console
    const adminDist = join(dataDir, 'admin');
    mkdirSync(adminDist);
    writeFileSync(join(adminDist, 'index.html'), '<!doctype html><title>admin</title>');
    const [apiPort, dispatcherPort, embeddedPort, echoPort] = [
      await freePort(),
      await freePort(),
      await freePort(),
      await freePort(),
    ];
    const env: NodeJS.ProcessEnv = {
      ...process.env,
      DATA_DIR: dataDir,
      API_PORT: String(apiPort),
      DISPATCHER_PORT: String(dispatcherPort),
      EMBEDDED_POSTGRES_PORT: String(embeddedPort),
      ECHO_TARGET_PORT: String(echoPort),
      ADMIN_DIST_DIR: adminDist,
      // the demo: an echo target, deliveries and a trickle of changes, so the apps are busy
      DEMO: 'true',
    };
    delete env.DATABASE_URL;
    // a group of its own, as a terminal gives a foreground job
    const stack = spawn(process.execPath, ['--import', 'tsx', 'scripts/start.ts'], {
      cwd: ROOT,
      env,
      detached: true,
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let output = '';
    stack.stdout.on('data', (chunk: Buffer) => (output += chunk.toString()));
    stack.stderr.on('data', (chunk: Buffer) => (output += chunk.toString()));
    const exited = new Promise<number | null>((resolveExit) =>
      stack.once('exit', (code) => resolveExit(code)),
    );
    const deadline = Date.now() + 150_000;
    while (!output.includes('The platform is running.') && Date.now() < deadline) {
      if (stack.exitCode !== null) break;
      await new Promise((r) => setTimeout(r, 200));
    }
    expect(output, output).toContain('The platform is running.');
    // let it deliver for a moment
    await new Promise((r) => setTimeout(r, 3000));
    const before = output.length;

    process.kill(-stack.pid!, 'SIGINT');
    expect(await exited).toBe(0);

    const stop = output.slice(before);
    // nothing at level 50 (error) or above, no stack trace, no terminated connection
    expect(stop, stop).not.toMatch(/"level":(5|6)\d/);
    expect(stop, stop).not.toMatch(/terminating connection|administrator command|\n\s+at /);
    expect(stop, stop).not.toMatch(/exited unexpectedly|failed/i);
    // Postgres is down (its lock file gone) and every port free again
    expect(existsSync(join(dataDir, 'postgres', 'postmaster.pid'))).toBe(false);
    for (const port of [apiPort, dispatcherPort]) {
      await expect(fetch(`http://127.0.0.1:${port}/healthz`)).rejects.toThrow();
    }
  }, 240_000);
});
