/**
 * `pnpm migrate`: brings the database at `DATABASE_URL` up to date and exits. A deploy runs it
 * once before starting new API replicas, so no replica serves requests against an old schema
 * (the dispatcher also migrates on start; the migration lock makes running both safe).
 */
import { createKnex } from './knex';
import { migrate } from './migrate';

async function main(): Promise<void> {
  const databaseUrl = process.env.DATABASE_URL;
  if (!databaseUrl) {
    console.error('DATABASE_URL must name the Postgres to migrate');
    process.exit(2);
  }
  const knex = createKnex(databaseUrl, { pool: { max: 1 }, applicationName: 'platform-migrate' });
  try {
    const applied = await migrate(knex);
    console.log(applied.length ? `applied ${applied.join(', ')}` : 'already up to date');
  } finally {
    await knex.destroy();
  }
}

main().catch((error: unknown) => {
  console.error('migration failed:', error instanceof Error ? error.message : error);
  process.exit(1);
});
