import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestDatabase, type TestDatabase } from '@platform/testkit';
import { enqueueEntityChange } from '../queue/enqueue';
import { seedParty } from '@platform/testkit';
import { attemptResult, claim, ownRegistration, TEST_HEALTH_POLICY, unitChange } from '../../tests/queue';
import { WebhookState } from '@platform/shared';
import { completeWebhooks } from '../queue/complete';
import { releaseClaims } from '../queue/release-claims';
import type { ClaimedWebhook } from '../queue/claim';
import { BUCKET_TABLES, buildBucketLayout, moveTenant } from '../../tests/bucket-layout';
import { SHARED_BUCKETS } from '../buckets';

const PARTITIONS = 8;

let db: TestDatabase;
const parties: number[] = [];

/** The bucket of a party's tenant, from the directory. */
async function bucketOf(party: number): Promise<number> {
  return (await db.knex('parties').where({ id: party }).first('bucket')).bucket as number;
}

/** The partition number a row of `table` with bucket `bucket` is in. */
async function partitionOf(table: string, bucket: number): Promise<string> {
  const { rows } = await db.knex.raw<{ rows: { partition: string }[] }>(
    `select substring(tableoid::regclass::text from '_b([0-9]+)$') as partition from ${table} where bucket = ? limit 1`,
    [bucket],
  );
  return rows[0]!.partition;
}

beforeAll(async () => {
  db = await createTestDatabase();
  // tenants whose buckets fall in different partitions; the first two seeded before the layout
  // is built (their rows get their buckets there), the third on it, through the real writes
  for (let i = 0; i < 3; i++) {
    if (i === 2) await buildBucketLayout(db.knex, { partitions: PARTITIONS });
    const id = await seedParty(db.knex, `Tenant ${i}`);
    parties.push(id);
    await ownRegistration(db.knex, `http://127.0.0.1:9/${id}/grouped`, { partyId: id, shouldGroup: true });
    await ownRegistration(db.knex, `http://127.0.0.1:9/${id}/plain`, { partyId: id });
    for (let n = 0; n < 3; n++) {
      await db.knex.transaction((trx) => enqueueEntityChange(trx, unitChange(id, n % 2)));
    }
    if (i === 0) {
      // the tenant that moves: chains of four in two groups
      for (let n = 0; n < 5; n++) {
        await db.knex.transaction((trx) => enqueueEntityChange(trx, unitChange(id, n % 2)));
      }
    }
  }
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
    expect(rows[0]!.n).toBe((parties.length * 3 + 5) * 2);
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
      [await bucketOf(party), ids.map((r) => r.id)],
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

  it('moves a tenant to a bucket in another partition between deliveries, and every group keeps its order', async () => {
    const party = parties[0]!;
    const policy = { dispatcherId: 'emulation', leaseMs: 60_000, policy: TEST_HEALTH_POLICY };
    const delivered: ClaimedWebhook[] = [];
    /** One claim, its results recorded, and the heads its completions lease recorded in turn; answers how many. */
    async function deliverRound(handBack: boolean): Promise<number> {
      let batch = await claim(db.knex, { batch: 64, leaseMs: 60_000, dispatcherId: 'emulation' });
      const count = batch.length;
      while (batch.length > 0) {
        delivered.push(...batch);
        const { leased } = await completeWebhooks(
          db.knex,
          policy,
          batch.map((w) => attemptResult(w)),
        );
        if (handBack) {
          // the move waits until nothing of the tenant is leased: the dispatcher hands its leases back
          await releaseClaims(
            db.knex,
            'emulation',
            leased.map((w) => w.id),
          );
          break;
        }
        batch = leased;
      }
      return count;
    }
    expect(await deliverRound(true)).toBeGreaterThan(0);

    const from = await bucketOf(party);
    const { rows } = await db.knex.raw<{ rows: { to: number }[] }>(
      `select b as to from generate_series(0, ${SHARED_BUCKETS - 1}) b
        where not satisfies_hash_partition('webhooks'::regclass, ${PARTITIONS},
                (select substring(tableoid::regclass::text from '_b([0-9]+)$')::int from webhooks where bucket = ? limit 1), b)
        limit 1`,
      [from],
    );
    const to = rows[0]!.to;
    const before = await db
      .knex('webhooks')
      .whereIn('registration_id', db.knex('webhook_registrations').where({ party_id: party }).select('id'))
      .orderBy('id')
      .select('id', 'state', 'group_key', 'group_seq');
    await moveTenant(db.knex, party, to);
    const after = await db
      .knex('webhooks')
      .whereIn('registration_id', db.knex('webhook_registrations').where({ party_id: party }).select('id'))
      .orderBy('id')
      .select('id', 'state', 'group_key', 'group_seq', 'bucket');
    expect(after.map(({ bucket: _bucket, ...row }) => row)).toEqual(before);
    expect(new Set(after.map((row) => row.bucket))).toEqual(new Set([to]));
    for (const { table } of BUCKET_TABLES) {
      const { rows: left } = await db.knex.raw<{ rows: { n: number }[] }>(
        `select count(*)::int as n from ${table} where bucket = ? and ${
          table === 'webhook_targets' || table === 'webhook_registrations'
            ? 'party_id = ?'
            : 'registration_id in (select id from webhook_registrations where party_id = ?)'
        }`,
        [from, party],
      );
      expect(left[0]!.n).toBe(0);
    }

    while ((await deliverRound(false)) > 0);
    const { rows: states } = await db.knex.raw<{ rows: { state: number; n: number }[] }>(
      `select state, count(*)::int as n from webhooks group by state`,
    );
    expect(states).toEqual([{ state: WebhookState.Successful, n: (parties.length * 3 + 5) * 2 }]);
    // each group delivered in group_seq order, each webhook once
    const seqs = new Map<string, number[]>();
    const seqOf = new Map(
      (await db.knex('webhooks').select('id', 'group_seq')).map(
        (w: { id: string; group_seq: string | null }) => [Number(w.id), Number(w.group_seq)],
      ),
    );
    for (const w of delivered) {
      if (w.group_key === null) continue;
      const key = `${w.registration_id}/${w.group_key}`;
      seqs.set(key, [...(seqs.get(key) ?? []), seqOf.get(Number(w.id))!]);
    }
    expect(seqs.size).toBeGreaterThan(0);
    for (const [, order] of seqs)
      expect(order).toEqual([...order].sort((a, b) => a - b).map((_, i) => i + 1));
    expect(new Set(delivered.map((w) => w.id)).size).toBe(delivered.length);
  });

  it("writes a tenant's new changes through the real enqueue into its bucket's partition, the moved tenant's into its new one, and its groups go on there", async () => {
    const [moved, other] = [parties[0]!, parties[2]!];
    const groupBefore = await db
      .knex('webhook_groups')
      .where({ group_key: 'Unit:1' })
      .whereIn('registration_id', db.knex('webhook_registrations').where({ party_id: moved }).select('id'))
      .first('next_seq', 'bucket');
    for (const party of [moved, other]) {
      const written = await db.knex.transaction((trx) => enqueueEntityChange(trx, unitChange(party, 1)));
      expect(written).toBe(2);
    }
    for (const party of [moved, other]) {
      const bucket = await bucketOf(party);
      const rows = await db
        .knex('webhooks')
        .whereIn('registration_id', db.knex('webhook_registrations').where({ party_id: party }).select('id'))
        .where({ state: WebhookState.Created })
        .select('bucket', 'group_key', 'group_seq');
      expect(rows.length).toBe(2);
      for (const row of rows) expect(row.bucket).toBe(bucket);
      // colocated: the webhooks in the partition number of the tenant's registrations
      expect(await partitionOf('webhooks', bucket)).toBe(await partitionOf('webhook_registrations', bucket));
    }
    // the moved tenant's group continues its sequence in the new bucket
    const grouped = await db
      .knex('webhooks')
      .whereIn('registration_id', db.knex('webhook_registrations').where({ party_id: moved }).select('id'))
      .where({ state: WebhookState.Created, group_key: 'Unit:1' })
      .first('group_seq', 'bucket');
    expect(Number(grouped.group_seq)).toBe(Number(groupBefore.next_seq) + 1);
    expect(grouped.bucket).toBe(groupBefore.bucket);
    const { rows: groups } = await db.knex.raw<{ rows: { n: number }[] }>(
      `select count(*)::int as n from webhook_groups where group_key = 'Unit:1' and registration_id in
         (select id from webhook_registrations where party_id = ?)`,
      [moved],
    );
    expect(groups[0]!.n).toBe(1);
  });
});
