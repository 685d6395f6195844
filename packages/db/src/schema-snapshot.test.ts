import { readFile } from 'node:fs/promises';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { SCHEMA_FILE, schemaSnapshot } from './schema-snapshot';
import { createTestDatabase, type TestDatabase } from '@platform/testkit';

let db: TestDatabase;

beforeAll(async () => {
  db = await createTestDatabase();
});
afterAll(() => db.drop());

describe('the schema snapshot', () => {
  it('is what migrate makes: run `pnpm db:schema` after changing a migration or a function', async () => {
    const committed = await readFile(SCHEMA_FILE, 'utf8').catch(() => '');
    expect(
      await schemaSnapshot(db.knex),
      'packages/db/schema.sql is not the schema migrate makes: run pnpm db:schema and commit it',
    ).toBe(committed);
  });
});
