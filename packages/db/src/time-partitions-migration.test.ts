import { randomBytes } from 'node:crypto';
import {
  adminQuery,
  createTestDatabase,
  seedParty,
  withDatabase,
  type TestDatabase,
} from '@platform/testkit';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { MIGRATIONS } from '../migrations/index';
import { createKnex } from './knex';
import { pgErrorCode, PgErrorCode } from './errors';
import { schemaSnapshot } from './schema-snapshot';
import type { Knex } from 'knex';

const PARTITIONING = '20261128000000_time_partitions';
const before = MIGRATIONS.slice(
  0,
  MIGRATIONS.findIndex(([name]) => name === PARTITIONING),
);

let adminUrl: string;
let name: string;
let knex: Knex;
let fresh: TestDatabase;

/** Migrates as `migrate` does (knex's bookkeeping included), with only `migrations` known. */
async function migrateTo(migrations: typeof MIGRATIONS): Promise<void> {
  await knex.migrate.latest({
    migrationSource: {
      getMigrations: async () => migrations.map(([name]) => name),
      getMigrationName: (name: string) => name,
      getMigration: async (name: string) => ({
        up: migrations.find(([candidate]) => candidate === name)![1].up,
        down: () => Promise.reject(new Error('forward-only')),
      }),
    },
  });
}

beforeAll(async () => {
  const { inject } = await import('vitest');
  adminUrl = inject('databaseAdminUrl');
  name = `test_partitioning_${randomBytes(4).toString('hex')}`;
  await adminQuery(adminUrl, `create database ${name}`);
  knex = createKnex(withDatabase(adminUrl, name), { pool: { max: 2 } });
  fresh = await createTestDatabase();
});
afterAll(async () => {
  await knex?.destroy();
  await adminQuery(adminUrl, `drop database if exists ${name} with (force)`);
  await fresh?.drop();
});

describe('the time partitioning migration', () => {
  it('keeps the rows of the tables it converts, and the foreign key between them', async () => {
    await migrateTo(before);
    const partyId = await seedParty(knex);
    const [registration] = await knex('webhook_registrations')
      .insert({ party_id: partyId, target_url: 'http://127.0.0.1:9/hook', signing_secret: 'x' })
      .returning('id');
    const [event] = await knex('webhook_events')
      .insert({ registration_id: registration.id, entity_name: 'Unit', type: 2 })
      .returning('id');
    const changes = await knex('entity_changes')
      .insert(
        [1, 2, 3].map((entityId) => ({
          entity_name: 'Unit',
          type: 2,
          entity_id: entityId,
          entity: { entityId },
          initiator_party_id: partyId,
        })),
      )
      .returning('id');
    const webhooks = await knex('webhooks')
      .insert(
        changes.map((change: { id: number }) => ({
          registration_id: registration.id,
          event_id: event.id,
          entity_change_id: change.id,
          state: 3,
        })),
      )
      .returning('id');
    await knex('webhook_attempts').insert(
      webhooks.map((webhook: { id: number }) => ({
        webhook_id: webhook.id,
        number: 1,
        started_at: new Date(),
        duration_ms: 3,
        status_code: 200,
      })),
    );
    const rowsBefore = {
      changes: await knex('entity_changes').orderBy('id').select('*'),
      attempts: await knex('webhook_attempts').orderBy('id').select('*'),
    };

    await migrateTo(MIGRATIONS);

    // the same schema as a database migrated from empty
    expect(await schemaSnapshot(knex)).toBe(await schemaSnapshot(fresh.knex));
    // every row kept, in the first partition
    expect(await knex('entity_changes').orderBy('id').select('*')).toEqual(rowsBefore.changes);
    expect(await knex('webhook_attempts').orderBy('id').select('*')).toEqual(rowsBefore.attempts);
    const { rows: where } = await knex.raw(
      `select tableoid::regclass::text as partition, count(*)::int as n from entity_changes group by 1
       union all
       select tableoid::regclass::text, count(*)::int from webhook_attempts group by 1 order by 1`,
    );
    expect(where).toEqual([
      { partition: 'entity_changes_initial', n: 3 },
      { partition: 'webhook_attempts_initial', n: 3 },
    ]);
    // the webhooks still reach their changes, and the foreign key still refuses a missing one
    const { rows: joined } = await knex.raw(
      `select count(*)::int as n from webhooks w join entity_changes c on c.id = w.entity_change_id`,
    );
    expect(joined[0].n).toBe(3);
    const missing = await knex('webhooks')
      .insert({ registration_id: registration.id, event_id: event.id, entity_change_id: 999, state: 1 })
      .catch((error: unknown) => error);
    expect(pgErrorCode(missing)).toBe(PgErrorCode.ForeignKeyViolation);
    await expect(knex('entity_changes').where({ id: changes[0].id }).delete()).rejects.toMatchObject({
      code: PgErrorCode.ForeignKeyViolation,
    });

    // new rows go to today's partition, after the old ids
    const [next] = await knex('entity_changes')
      .insert({ entity_name: 'Unit', type: 2, entity_id: 4, entity: {}, initiator_party_id: partyId })
      .returning(knex.raw('id, tableoid::regclass::text as partition'));
    const today = new Date().toISOString().slice(0, 10).replaceAll('-', '');
    expect(next.partition).toBe(`entity_changes_${today}`);
  });

  it('leaves an empty first partition in a database migrated from empty', async () => {
    const { rows } = await fresh.knex.raw(
      `select (select count(*)::int from entity_changes_initial) as changes,
              (select count(*)::int from webhook_attempts_initial) as attempts`,
    );
    expect(rows[0]).toEqual({ changes: 0, attempts: 0 });
  });
});
