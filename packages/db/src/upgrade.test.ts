import { randomBytes } from 'node:crypto';
import { adminQuery, createTestDatabase, withDatabase, type TestDatabase } from '@platform/testkit';
import { PartyType, WebhookState } from '@platform/shared';
import { SHARED_BUCKETS } from './buckets';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { MIGRATIONS } from '../migrations/index';
import { createKnex } from './knex';
import { migrate } from './migrate';
import { pgErrorCode, PgErrorCode } from './errors';
import { schemaSnapshot } from './schema-snapshot';
import type { Knex } from 'knex';

/**
 * A database migrated by an older release, then by this one, ends as a database migrated from
 * empty (the same `schemaSnapshot`), with its rows kept. An older release is stood in for by the
 * migrations it knew, run with knex's bookkeeping as `migrate` runs them; the functions it had
 * are written by each test as that release left them where it matters (their signatures).
 */

let adminUrl: string;
let fresh: TestDatabase;
const older: { name: string; knex: Knex }[] = [];

/** A new database migrated as the release whose newest migration was `last` left it. */
async function olderRelease(last: string): Promise<Knex> {
  const migrations = MIGRATIONS.slice(0, MIGRATIONS.findIndex(([name]) => name === last) + 1);
  const name = `test_upgrade_${randomBytes(4).toString('hex')}`;
  await adminQuery(adminUrl, `create database ${name}`);
  const knex = createKnex(withDatabase(adminUrl, name), { pool: { max: 2 } });
  older.push({ name, knex });
  await knex.migrate.latest({
    migrationSource: {
      getMigrations: async () => migrations.map(([name]) => name),
      getMigrationName: (name: string) => name,
      getMigration: async (name: string) => ({
        up: migrations.find(([candidate]) => candidate === name)![1].up,
        config: migrations.find(([candidate]) => candidate === name)![1].config,
        down: () => Promise.reject(new Error('forward-only')),
      }),
    },
  });
  return knex;
}

beforeAll(async () => {
  const { inject } = await import('vitest');
  adminUrl = inject('databaseAdminUrl');
  fresh = await createTestDatabase();
});
afterAll(async () => {
  for (const { name, knex } of older) {
    await knex.destroy();
    await adminQuery(adminUrl, `drop database if exists ${name} with (force)`);
  }
  await fresh?.drop();
});

/** A party as an older release writes it (before the tenant directory): its id. */
async function olderParty(knex: Knex): Promise<number> {
  const [row] = await knex('parties')
    .insert({ type: PartyType.PropertyManagementCompany, name: 'Acme' })
    .returning('id');
  return row.id;
}

describe('a database of an older release', () => {
  it('keeps its registrations, which get their endpoints, and ends as a fresh one', async () => {
    const knex = await olderRelease('20261122001100_webhook_maintenance');
    const partyId = await olderParty(knex);
    const otherPartyId = await olderParty(knex);
    await knex('webhook_registrations').insert([
      { party_id: partyId, target_url: 'HTTP://Example.test:80/a', signing_secret: 'x' },
      { party_id: partyId, target_url: 'http://example.test/b', signing_secret: 'x' },
      { party_id: partyId, target_url: 'http://example.test/a', signing_secret: 'x' },
      { party_id: otherPartyId, target_url: 'http://example.test/a', signing_secret: 'x' },
    ]);

    await migrate(knex);

    expect(await schemaSnapshot(knex)).toBe(await schemaSnapshot(fresh.knex));
    const endpoints = await knex('webhook_registrations as r')
      .join('webhook_targets as t', 't.id', 'r.target_id')
      .orderBy('r.id')
      .select('t.id', 't.party_id', 't.url', 't.origin');
    expect(endpoints.map(({ party_id, url, origin }) => ({ party_id, url, origin }))).toEqual([
      { party_id: partyId, url: 'http://example.test/a', origin: 'http://example.test' },
      { party_id: partyId, url: 'http://example.test/b', origin: 'http://example.test' },
      { party_id: partyId, url: 'http://example.test/a', origin: 'http://example.test' },
      { party_id: otherPartyId, url: 'http://example.test/a', origin: 'http://example.test' },
    ]);
    // one party's two spellings of one URL share an endpoint; the other party's is its own
    const ids = endpoints.map((endpoint: { id: number }) => endpoint.id);
    expect(ids[2]).toBe(ids[0]);
    expect(new Set(ids).size).toBe(3);
    expect(await knex('webhook_targets').count({ n: '*' }).first()).toEqual({ n: 3 });
    // the directory and the registrations' buckets backfilled: an unmanaged party's own id % 4096
    const buckets = await knex('webhook_registrations as r')
      .join('parties as p', 'p.id', 'r.party_id')
      .join('webhook_targets as t', 't.id', 'r.target_id')
      .orderBy('r.id')
      .select('r.party_id', 'p.bucket as party', 'r.bucket as registration', 't.bucket as endpoint');
    for (const row of buckets) {
      expect(row.party).toBe(row.party_id % SHARED_BUCKETS);
      expect([row.registration, row.endpoint]).toEqual([row.party, row.party]);
    }
  });

  it('loses the functions whose signatures changed since', async () => {
    const knex = await olderRelease('20261125000000_queue_functions');
    // the signatures that release wrote (bodies aside): today's take other arguments
    await knex.raw(`
      create function webhook_deliveries(p_ids bigint[]) returns json
        language sql stable as 'select null::json';
      create function webhooks_complete(
        p_dispatcher_id text, p_lease_ms float8,
        p_ids bigint[], p_states smallint[], p_retry_delays_ms float8[],
        p_attempts smallint[], p_started_at timestamptz[], p_durations_ms int[],
        p_status_codes smallint[], p_error_kinds text[], p_response_bodies text[],
        p_registration_ids int[], p_group_keys text[], p_releases boolean[]
      ) returns json language sql as 'select null::json';
    `);

    await migrate(knex);

    expect(await schemaSnapshot(knex)).toBe(await schemaSnapshot(fresh.knex));
  });

  it('keeps the rows of the tables partitioning converts, and the foreign key between them', async () => {
    const knex = await olderRelease('20261127000300_replay');
    const partyId = await olderParty(knex);
    // that release's trigger gave each registration its origin's target
    const [target] = await knex('webhook_targets').insert({ origin: 'http://127.0.0.1:9' }).returning('id');
    const [registration] = await knex('webhook_registrations')
      .insert({
        party_id: partyId,
        target_url: 'http://127.0.0.1:9/hook',
        signing_secret: 'x',
        target_id: target.id,
      })
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
    // ids in three batches of the bucket backfill (20261204000000_bucket_not_null)
    const webhooks = await knex('webhooks')
      .insert(
        changes.map((change: { id: number }, i: number) => ({
          id: [1, 20_001, 45_000][i],
          registration_id: registration.id,
          event_id: event.id,
          entity_change_id: change.id,
          state: WebhookState.Successful,
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
    await knex('webhook_groups').insert({ registration_id: registration.id, group_key: 'g' });
    const rowsBefore = {
      changes: await knex('entity_changes').orderBy('id').select('*'),
      attempts: await knex('webhook_attempts').orderBy('id').select('*'),
    };

    await migrate(knex);

    // the same schema as a database migrated from empty
    expect(await schemaSnapshot(knex)).toBe(await schemaSnapshot(fresh.knex));
    // every row kept, in the first partition
    expect(await knex('entity_changes').orderBy('id').select('*')).toEqual(rowsBefore.changes);
    // the columns the older release had (later migrations add more, null on these rows)
    expect(
      await knex('webhook_attempts')
        .orderBy('id')
        .select(Object.keys(rowsBefore.attempts[0] as object)),
    ).toEqual(rowsBefore.attempts);
    // every webhook and group in its tenant's bucket, which is now required
    const bucket = (await knex('parties').where({ id: partyId }).first('bucket')).bucket as number;
    expect(bucket).toBe(partyId % SHARED_BUCKETS);
    expect(await knex('webhooks').orderBy('id').pluck('bucket')).toEqual([bucket, bucket, bucket]);
    expect(await knex('webhook_groups').pluck('bucket')).toEqual([bucket]);
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
      .insert({
        id: 45_001,
        registration_id: registration.id,
        event_id: event.id,
        entity_change_id: 999,
        state: WebhookState.Created,
        bucket,
      })
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
});

describe('a database migrated from empty', () => {
  it('has an empty first partition of each partitioned table', async () => {
    const { rows } = await fresh.knex.raw(
      `select (select count(*)::int from entity_changes_initial) as changes,
              (select count(*)::int from webhook_attempts_initial) as attempts`,
    );
    expect(rows[0]).toEqual({ changes: 0, attempts: 0 });
  });
});
