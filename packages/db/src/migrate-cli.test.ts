import { execFile } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it, inject } from 'vitest';
import { createKnex } from './knex';
import { withDatabase } from '@platform/testkit';

const run = promisify(execFile);
const root = resolve(import.meta.dirname, '../../..');
const adminUrl = inject('databaseAdminUrl');
// an empty database, not a clone of the migrated template: the CLI must build the schema itself
const database = `test_migrate_cli_${randomBytes(4).toString('hex')}`;

// the root package.json's `migrate` script as written (`tsx <file>`), run without needing pnpm on PATH
const [tool, ...args] = (
  JSON.parse(readFileSync(join(root, 'package.json'), 'utf8')) as {
    scripts: { migrate: string };
  }
).scripts.migrate.split(' ');

function migrateCli(databaseUrl: string | undefined) {
  const env = { ...process.env, DATABASE_URL: databaseUrl ?? '' };
  return run(join(root, 'node_modules/.bin', tool!), args, { cwd: root, env });
}

const admin = createKnex(adminUrl, { pool: { max: 1 } });
beforeAll(() => admin.raw(`create database ${database}`));
afterAll(async () => {
  await admin.raw(`drop database if exists ${database} with (force)`);
  await admin.destroy();
});

describe('pnpm migrate', () => {
  it('migrates an empty database, then finds nothing left to do', async () => {
    const url = withDatabase(adminUrl, database);
    expect((await migrateCli(url)).stdout).toMatch(/^applied .*_queue_functions/);
    const migrated = createKnex(url, { pool: { max: 1 } });
    try {
      const { rows } = await migrated.raw<{ rows: { webhooks: string | null }[] }>(
        `select to_regclass('public.webhooks')::text as webhooks`,
      );
      expect(rows[0]?.webhooks).toBe('webhooks');
    } finally {
      await migrated.destroy();
    }
    expect((await migrateCli(url)).stdout.trim()).toBe('already up to date');
  }, 60_000);

  it('refuses to run without DATABASE_URL', async () => {
    await expect(migrateCli(undefined)).rejects.toMatchObject({
      code: 2,
      stderr: expect.stringContaining('DATABASE_URL'),
    });
  }, 60_000);
});
