import type { Knex } from 'knex';
import { PERMISSIONS } from '@platform/shared';
import { MIGRATIONS } from '../migrations/index';
import { applyDatabaseFunctions } from './queue/functions/index';

const migrationSource: Knex.MigrationSource<string> = {
  getMigrations: async () => MIGRATIONS.map(([name]) => name),
  getMigrationName: (name) => name,
  getMigration: async (name) => {
    const found = MIGRATIONS.find(([candidate]) => candidate === name);
    if (!found) throw new Error(`unknown migration ${name}`);
    return {
      up: found[1].up,
      config: found[1].config,
      down: async () => Promise.reject(new Error('migrations are forward-only')),
    };
  },
};

/**
 * Brings the schema up to date, then writes the database's functions (`applyDatabaseFunctions`:
 * the migrations change only tables and indexes) and the permission catalog. Knex's migration lock
 * makes concurrent callers (an API and a dispatcher starting together) wait for each other instead
 * of racing.
 */
export async function migrate(knex: Knex): Promise<string[]> {
  const [, applied] = (await knex.migrate.latest({ migrationSource })) as [number, string[]];
  await applyDatabaseFunctions(knex);
  await syncPermissionCatalog(knex);
  return applied;
}

/** Upserts the permission catalog of `@platform/shared` into `permissions` (the code is the source). */
async function syncPermissionCatalog(knex: Knex): Promise<void> {
  await knex('permissions')
    .insert(PERMISSIONS.map(({ id, name, resource, action }) => ({ id, name, resource, action })))
    .onConflict('id')
    .merge();
}
