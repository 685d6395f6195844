import { randomBytes } from 'node:crypto';
import { existsSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { startEmbeddedPostgres } from '@platform/db/embedded';
import { createKnex, type Knex } from '@platform/db';
import { adminQuery, cloneDatabase, createTemplateDatabase, freePort, ROOT } from '@platform/testkit';

/** A database of one bench mode. */
export interface BenchDatabase {
  name: string;
  url: string;
  knex: Knex;
  /** Closes its pool and drops it now, not at the end of the run (a mode making many). */
  drop(): Promise<void>;
}

/** The Postgres the bench runs on and the databases it made there. */
export interface BenchCluster {
  /** `embedded` or the server of DATABASE_URL (without credentials). */
  server: string;
  /** A URL of the server's `postgres` database, for a role that may create databases. */
  adminUrl: string;
  /** A fresh migrated database `bench_<run>_<mode>`, cloned from the run's template. */
  create(mode: string): Promise<BenchDatabase>;
  /** Drops every database of the run and stops an embedded cluster. */
  close(): Promise<void>;
}

/**
 * Uses DATABASE_URL (its role needs CREATEDB) or, like the tests, an embedded cluster (in
 * .data/bench-postgres, on a free port). Migrates one template database per run; each mode
 * clones it, so every mode starts from empty tables.
 */
export async function openCluster(databaseUrl: string | undefined): Promise<BenchCluster> {
  let adminUrl = databaseUrl;
  let stopCluster = async () => {};
  let server = 'embedded';
  if (!adminUrl) {
    const dataDir = resolve(ROOT, '.data/bench-postgres');
    const cluster = await startEmbeddedPostgres({
      dataDir,
      port: await freePort(),
      // commit times, so the latency mode measures from the commit itself
      settings: { track_commit_timestamp: 'on' },
    });
    adminUrl = cluster.url;
    stopCluster = async () => {
      // Ctrl-C signals the whole process group, so Postgres may be down already; its stop() would
      // then wait for an exit event that has fired before
      if (!existsSync(join(dataDir, 'postmaster.pid'))) return;
      await Promise.race([cluster.stop(), sleep(15_000)]);
    };
    // the cluster is the bench's alone: databases still here were left by a run that was killed
    const knex = createKnex(adminUrl, { pool: { max: 1 } });
    try {
      const { rows } = await knex.raw<{ rows: { datname: string }[] }>(
        `select datname from pg_database where datname like 'bench\\_%'`,
      );
      for (const { datname } of rows) await knex.raw(`drop database if exists ?? with (force)`, [datname]);
      if (rows.length > 0)
        process.stderr.write(`[bench] dropped ${rows.length} databases of an earlier run\n`);
    } finally {
      await knex.destroy();
    }
  } else {
    const url = new URL(adminUrl);
    server = `${url.hostname}:${url.port || 5432}`;
  }
  const run = `bench_${randomBytes(4).toString('hex')}`;
  const template = `${run}_template`;
  const created: string[] = [];
  created.push(template);
  await createTemplateDatabase(adminUrl, template);
  const open: Knex[] = [];
  return {
    server,
    adminUrl,
    create: async (mode) => {
      const name = `${run}_${mode}`;
      const url = await cloneDatabase(adminUrl, template, name);
      created.push(name);
      const modeKnex = createKnex(url, { pool: { max: 8 }, applicationName: 'platform-bench' });
      open.push(modeKnex);
      const drop = async () => {
        open.splice(open.indexOf(modeKnex), 1);
        created.splice(created.indexOf(name), 1);
        await modeKnex.destroy();
        await adminQuery(adminUrl, `drop database if exists ${name} with (force)`);
      };
      return { name, url, knex: modeKnex, drop };
    },
    close: async () => {
      await Promise.all(open.map((k) => k.destroy()));
      for (const name of created.reverse()) {
        await adminQuery(adminUrl, `drop database if exists ${name} with (force)`).catch(() => {});
      }
      await stopCluster();
    },
  };
}
