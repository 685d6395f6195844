import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestDatabase, type TestDatabase } from '@platform/testkit';
import { enqueueEntityChange } from '../queue/enqueue';
import { unitChange } from '../../tests/queue';
import { BUCKET_TABLES, buildBucketLayout } from './bucket-layout';

const PARTITIONS = 8;
const BUCKETS = 256;

let db: TestDatabase;
const parties: number[] = [];

async function registration(party: number, shouldGroup: boolean): Promise<number> {
  const [row] = await db
    .knex('webhook_registrations')
    .insert({
      party_id: party,
      target_url: `http://127.0.0.1:9/${party}/${shouldGroup}`,
      should_group: shouldGroup,
      signing_secret: 's',
    })
    .returning('id');
  await db.knex('webhook_events').insert({ registration_id: row.id, entity_name: 'Unit', type: 2 });
  return row.id;
}

beforeAll(async () => {
  db = await createTestDatabase();
  // tenants whose buckets fall in different partitions
  for (let i = 0; i < 3; i++) {
    const [{ id }] = await db
      .knex('parties')
      .insert({ type: 2, name: `Tenant ${i}` })
      .returning('id');
    parties.push(id);
    await registration(id, true);
    await registration(id, false);
    for (let n = 0; n < 3; n++) {
      await db.knex.transaction((trx) => enqueueEntityChange(trx, unitChange(id, n % 2)));
    }
  }
  await buildBucketLayout(db.knex, { partitions: PARTITIONS, buckets: BUCKETS });
});

afterAll(async () => {
  await db?.drop();
});

/** The relations a plan reads, by the table they are a partition of. */
function partitionsRead(plan: unknown): Map<string, Set<string>> {
  const found = new Map<string, Set<string>>();
  const visit = (node: unknown): void => {
    if (Array.isArray(node)) return node.forEach(visit);
    if (node === null || typeof node !== 'object') return;
    const relation = (node as Record<string, unknown>)['Relation Name'];
    if (typeof relation === 'string') {
      const match = /^(.*)_b(\d+)$/.exec(relation);
      if (match) found.set(match[1]!, (found.get(match[1]!) ?? new Set()).add(match[2]!));
    }
    Object.values(node).forEach(visit);
  };
  visit(plan);
  return found;
}

describe('the queue tables partitioned by tenant bucket (the Citus emulation, first step)', () => {
  it('refuses a unique key without the bucket, as Citus refuses one without the distribution column', async () => {
    await expect(
      db.knex.raw(`alter table webhook_groups add constraint flat_key unique (registration_id, group_key)`),
    ).rejects.toThrow(/must include all partitioning columns/);
    await expect(db.knex.raw(`alter table webhooks add constraint flat_key unique (id)`)).rejects.toThrow(
      /must include all partitioning columns/,
    );
  });

  it("keeps every row, and puts all of a tenant's rows in one partition number in every table (colocation)", async () => {
    const placements = new Map<number, Set<string>>();
    for (const { table } of BUCKET_TABLES) {
      const { rows } = await db.knex.raw<{ rows: { party: number; partition: string }[] }>(
        `select distinct r.party_id as party, substring(x.tableoid::regclass::text from '_b([0-9]+)$') as partition
           from ${table} x join webhook_registrations r on r.bucket = x.bucket and ${
             table === 'webhook_registrations'
               ? 'r.id = x.id'
               : table === 'webhook_targets'
                 ? 'r.target_id = x.id'
                 : 'r.id = x.registration_id'
           }`,
      );
      for (const row of rows)
        placements.set(row.party, (placements.get(row.party) ?? new Set()).add(row.partition));
    }
    expect([...placements.keys()].sort()).toEqual([...parties].sort());
    for (const party of parties) expect(placements.get(party)!.size).toBe(1);
    const { rows } = await db.knex.raw<{ rows: { n: number }[] }>(`select count(*)::int as n from webhooks`);
    expect(rows[0]!.n).toBe(parties.length * 3 * 2);
  });

  it('reads one partition per table for a statement that pins the bucket', async () => {
    const party = parties[1]!;
    const { rows: ids } = await db.knex.raw<{ rows: { id: number }[] }>(
      `select w.id from webhooks w join webhook_registrations r on r.bucket = w.bucket and r.id = w.registration_id
        where r.party_id = ?`,
      [party],
    );
    const { rows } = await db.knex.raw<{ rows: { 'QUERY PLAN': unknown }[] }>(
      `explain (format json)
       select w.id, t.url, g.open_count from webhooks w
         join webhook_registrations r on r.bucket = w.bucket and r.id = w.registration_id
         join webhook_targets t on t.bucket = r.bucket and t.id = r.target_id
         left join webhook_groups g on g.bucket = w.bucket and g.registration_id = w.registration_id and g.group_key = w.group_key
        where w.bucket = ?::int and w.id = any(?::bigint[])`,
      [party % BUCKETS, ids.map((r) => r.id)],
    );
    const read = partitionsRead(rows[0]!['QUERY PLAN']);
    expect([...read.keys()].sort()).toEqual([
      'webhook_groups',
      'webhook_registrations',
      'webhook_targets',
      'webhooks',
    ]);
    const numbers = new Set([...read.values()].flatMap((set) => [...set]));
    for (const set of read.values()) expect(set.size).toBe(1);
    expect(numbers.size).toBe(1);
  });

  it("makes today's enqueue fail: its statements must carry the bucket first (docs/scaling.md, step 4)", async () => {
    await expect(
      db.knex.transaction((trx) => enqueueEntityChange(trx, unitChange(parties[0]!, 1))),
    ).rejects.toThrow(/ON CONFLICT specification|"bucket"/);
  });
});
