/**
 * The demo's first minute (README, "The first minute"): on a fresh start, the console shows within 60 s of "The platform is running"
 * deliveries, a Retrying webhook and a blocked group. Starts scripts/start.ts as `pnpm start` does
 * (development, the demo on, no retry schedule given), on a fresh data folder (embedded Postgres,
 * or a new database on DATABASE_URL's server), free ports and an admin UI it builds itself.
 */
import { randomBytes } from 'node:crypto';
import { rmSync } from 'node:fs';
import { join } from 'node:path';
import { expect, test } from '@playwright/test';
import { adminQuery, freePort, ROOT, spawnNode, withDatabase } from '@platform/testkit';

const START_TIMEOUT_MS = 300_000;

test('a cold pnpm start shows deliveries, a Retrying webhook and a blocked group within 60 s', async ({
  page,
}) => {
  const runId = randomBytes(4).toString('hex');
  const dataDir = join(ROOT, '.data', `demo-${runId}`);
  const ports = {
    api: await freePort(),
    dispatcher: await freePort(),
    postgres: await freePort(),
    echo: await freePort(),
  };
  const env: Record<string, string | undefined> = {
    NODE_ENV: 'development',
    LOG_LEVEL: 'warn',
    API_PORT: String(ports.api),
    DISPATCHER_PORT: String(ports.dispatcher),
    ECHO_TARGET_PORT: String(ports.echo),
    DATA_DIR: dataDir,
    ADMIN_DIST_DIR: join(dataDir, 'admin'),
    WEBHOOK_RETRY_SCHEDULE: undefined,
    DEMO: undefined,
    DEMO_PASSWORD: undefined,
  };
  const serverUrl = process.env.DATABASE_URL;
  if (serverUrl) {
    await adminQuery(serverUrl, `create database demo_${runId}`);
    env.DATABASE_URL = withDatabase(serverUrl, `demo_${runId}`);
  } else {
    env.DATABASE_URL = undefined;
    env.EMBEDDED_POSTGRES_PORT = String(ports.postgres);
  }

  let output = '';
  const stack = spawnNode('scripts/start.ts', {
    env,
    label: 'pnpm start',
    onOutput: (chunk) => (output += chunk),
  });
  try {
    await expect
      .poll(() => output.includes('The platform is running'), { timeout: START_TIMEOUT_MS })
      .toBe(true);
    const deadline = Date.now() + 60_000;
    const remaining = () => Math.max(1, deadline - Date.now());
    expect(output).toContain(`http://127.0.0.1:${ports.api}/admin`);
    expect(output).toContain(`http://127.0.0.1:${ports.echo}`);
    expect(output).toContain('manager@example.com');

    await page.goto(`http://127.0.0.1:${ports.api}/admin/`);
    await page.getByLabel('Email').fill('manager@example.com');
    await page.getByLabel('Password').fill('Demo-Password-1!');
    await page.getByRole('button', { name: 'Sign in' }).click();
    await expect(page.getByTestId('metric-retrying')).toHaveText(/^[1-9]\d* Retrying/, {
      timeout: remaining(),
    });
    await expect(page.getByTestId('state-count-Successful')).toHaveText(/^[1-9]/, { timeout: remaining() });
    await expect(page.getByTestId('metric-blocked-groups').getByRole('link')).toHaveText(/^[1-9]/, {
      timeout: remaining(),
    });
    await page.getByTestId('metric-blocked-groups').getByRole('link').click();
    await expect(page.getByTestId('blocked-group').first()).toBeVisible({ timeout: remaining() });
    expect(Date.now()).toBeLessThanOrEqual(deadline);
    // the echo target checked the signatures with the secrets the seed handed it
    expect(output).toMatch(/\/demo\/ungrouped webhook \d+ Property \d #\d+ signature ok → 200/);
    expect(output).not.toContain('signature BAD');
  } finally {
    await stack.stop(60_000);
    rmSync(dataDir, { recursive: true, force: true });
    if (serverUrl) await adminQuery(serverUrl, `drop database if exists demo_${runId} with (force)`);
  }
});
