/**
 * `pnpm db:schema`: migrates a new, empty database, writes its schema to `packages/db/schema.sql`
 * (the snapshot `schema-snapshot.test.ts` checks), and drops the database. Uses the server of
 * DATABASE_URL (the role needs CREATEDB), or else an embedded Postgres in `.data/schema-postgres`
 * on port 54339, the version the tests use by default.
 */
import { randomBytes } from 'node:crypto';
import { writeFile } from 'node:fs/promises';
import { fileURLToPath } from 'node:url';
import { startEmbeddedPostgres, type EmbeddedDatabase } from './embedded';
import { createKnex } from './knex';
import { migrate } from './migrate';
import { SCHEMA_FILE, schemaSnapshot } from './schema-snapshot';

async function main(): Promise<void> {
  let embedded: EmbeddedDatabase | undefined;
  const serverUrl =
    process.env.DATABASE_URL ??
    (embedded = await startEmbeddedPostgres({
      dataDir: fileURLToPath(new URL('../../../.data/schema-postgres', import.meta.url)),
      port: 54339,
    })).url;
  const name = `schema_${randomBytes(6).toString('hex')}`;
  const server = createKnex(serverUrl, { pool: { max: 1 } });
  await server.raw(`create database ${name}`);
  const url = new URL(serverUrl);
  url.pathname = `/${name}`;
  const knex = createKnex(url.toString(), { pool: { max: 1 } });
  try {
    await migrate(knex);
    await writeFile(SCHEMA_FILE, await schemaSnapshot(knex));
    console.log(`wrote ${SCHEMA_FILE}`);
  } finally {
    await knex.destroy();
    await server.raw(`drop database if exists ${name} with (force)`);
    await server.destroy();
    await embedded?.stop();
  }
}

await main();
