import { randomBytes } from 'node:crypto';
import { closeSync, mkdirSync, openSync, readFileSync, rmSync, writeSync } from 'node:fs';
import { dirname, resolve } from 'node:path';
import { createKnex, migrate, type Knex } from '@platform/db';
import { startEmbeddedPostgres } from '@platform/db/embedded';
import pg from 'pg';
import { freePort } from './ports';
import { ROOT } from './processes';

declare module 'vitest' {
  export interface ProvidedContext {
    databaseAdminUrl: string;
    databaseTemplate: string;
  }
}

/** `url` with its database name replaced. */
export function withDatabase(url: string, database: string): string {
  const parsed = new URL(url);
  parsed.pathname = `/${database}`;
  return parsed.toString();
}

/** Runs one statement (create or drop a database) on the server of `adminUrl`, on a connection of its own. */
export async function adminQuery(adminUrl: string, sql: string): Promise<void> {
  const client = new pg.Client({ connectionString: adminUrl });
  await client.connect();
  try {
    await client.query(sql);
  } finally {
    await client.end();
  }
}

/** Whether a process with this pid runs (signal 0 checks without signalling). */
function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
}

/**
 * A data folder for this run's embedded cluster: `base`, or `base-2`, `base-3`… when a live test
 * run owns it. Starting a cluster stops whatever postmaster runs in its folder (the orphan of a
 * killed run), so two test runs in one checkout (the whole suite and one file beside it) must
 * not share a folder: each would stop the other's Postgres. Ownership is a file `<folder>.owner`
 * holding the owner's pid, created exclusively; a dead owner's file is taken over.
 */
export function claimDataDir(base: string): { dataDir: string; release(): void } {
  mkdirSync(dirname(base), { recursive: true });
  for (let slot = 1; ; slot++) {
    const dataDir = slot === 1 ? base : `${base}-${slot}`;
    const ownerFile = `${dataDir}.owner`;
    for (let attempt = 0; attempt < 2; attempt++) {
      try {
        const fd = openSync(ownerFile, 'wx');
        writeSync(fd, String(process.pid));
        closeSync(fd);
        return { dataDir, release: () => rmSync(ownerFile, { force: true }) };
      } catch (error) {
        if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
        const owner = Number(readFileSync(ownerFile, 'utf8'));
        if (Number.isInteger(owner) && owner > 0 && alive(owner)) break; // taken: the next slot
        rmSync(ownerFile, { force: true }); // its run died: take it over
      }
    }
  }
}

/** Creates database `name` on the server of `adminUrl` and migrates it, to be cloned. */
export async function createTemplateDatabase(adminUrl: string, name: string): Promise<void> {
  await adminQuery(adminUrl, `create database ${name}`);
  const knex = createKnex(withDatabase(adminUrl, name), { pool: { max: 2 } });
  try {
    await migrate(knex);
  } finally {
    await knex.destroy();
  }
}

/** Creates database `name` as a copy of `template` (`CREATE DATABASE … TEMPLATE`); answers its URL. */
export async function cloneDatabase(adminUrl: string, template: string, name: string): Promise<string> {
  for (let attempt = 1; ; attempt++) {
    try {
      await adminQuery(adminUrl, `create database ${name} template ${template}`);
      return withDatabase(adminUrl, name);
    } catch (error) {
      // two clients cloning at the same instant can see "source database is being accessed"
      if (attempt >= 20 || !String(error).includes('being accessed')) throw error;
      await new Promise((r) => setTimeout(r, 50 * attempt));
    }
  }
}

/**
 * Vitest global setup: uses `DATABASE_URL` or starts the embedded test cluster, migrates a
 * template database once, and hands both to the test files, which clone the template.
 */
export async function setupTestDatabases(project: {
  provide(key: 'databaseAdminUrl' | 'databaseTemplate', value: string): void;
}): Promise<() => Promise<void>> {
  let adminUrl = process.env.DATABASE_URL;
  let stopCluster = async () => {};
  if (!adminUrl) {
    const { dataDir, release } = claimDataDir(resolve(ROOT, '.data/test-postgres'));
    try {
      const cluster = await startEmbeddedPostgres({ dataDir, port: await freePort() });
      adminUrl = cluster.url;
      stopCluster = () => cluster.stop().finally(release);
    } catch (error) {
      release();
      throw error;
    }
  }
  const template = `test_template_${process.pid}_${randomBytes(3).toString('hex')}`;
  try {
    await createTemplateDatabase(adminUrl, template);
  } catch (error) {
    await stopCluster();
    throw error;
  }
  project.provide('databaseAdminUrl', adminUrl);
  project.provide('databaseTemplate', template);
  return async () => {
    await adminQuery(adminUrl, `drop database if exists ${template} with (force)`);
    await stopCluster();
  };
}

export interface TestDatabase {
  url: string;
  knex: Knex;
  /** Closes the pool and drops the database. */
  drop(): Promise<void>;
}

/** A fresh, migrated database for one test file, cloned from the template. */
export async function createTestDatabase(): Promise<TestDatabase> {
  // loaded here, not at the top: bench, chaos and Playwright import the kit outside vitest
  const { inject } = await import('vitest');
  const adminUrl = inject('databaseAdminUrl');
  const template = inject('databaseTemplate');
  const name = `test_${randomBytes(6).toString('hex')}`;
  const url = await cloneDatabase(adminUrl, template, name);
  const knex = createKnex(url, { pool: { max: 5 } });
  return {
    url,
    knex,
    drop: async () => {
      await knex.destroy();
      await adminQuery(adminUrl, `drop database if exists ${name} with (force)`);
    },
  };
}
