import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestDatabase, seedParty, type TestDatabase } from '@platform/testkit';
import { WebhookState } from '@platform/shared';
import { attemptResult, claim, ownRegistration, TEST_HEALTH_POLICY, unitChange } from '../../tests/queue';
import { bucketPartition, buildBucketLayout } from '../../tests/bucket-layout';
import {
  customPlansForFunctions,
  planRecorder,
  spread,
  type PlanRecorder,
  type StatementPlan,
} from '../../tests/partition-plans';
import { enqueueEntityChange } from '../queue/enqueue';
import { completeWebhooks } from '../queue/complete';
import { releaseClaims } from '../queue/release-claims';
import { replayEntityChanges } from '../queue/replay';
import { applyOperatorAction } from '../queue/operator-apply';
import { abortRegistrationWebhooks } from '../queue/abort-registration-webhooks';
import { claimNotifiedWebhooks } from '../queue/claim';
import { pruneWebhooksStep } from '../queue/prune';
import { releaseGroups } from '../queue/release-groups';

const PARTITIONS = 8;

let db: TestDatabase;
let recorder: PlanRecorder;
/** Three tenants, each in a partition of its own, each with a grouped and a plain registration. */
const tenants: { party: number; bucket: number; grouped: number; plain: number }[] = [];

beforeAll(async () => {
  db = await createTestDatabase();
  await buildBucketLayout(db.knex, { partitions: PARTITIONS });
  await customPlansForFunctions(db.knex);
  const taken = new Set<number>();
  while (tenants.length < 3) {
    const party = await seedParty(db.knex, `Tenant ${tenants.length}`);
    const { bucket } = await db.knex('parties').where({ id: party }).first('bucket');
    const partition = await bucketPartition(db.knex, 'webhooks', PARTITIONS, bucket);
    if (taken.has(partition)) continue;
    taken.add(partition);
    const grouped = await ownRegistration(db.knex, `http://127.0.0.1:9/${party}/g`, {
      partyId: party,
      shouldGroup: true,
    });
    const plain = await ownRegistration(db.knex, `http://127.0.0.1:9/${party}/p`, { partyId: party });
    tenants.push({ party, bucket, grouped: grouped.id, plain: plain.id });
    for (let n = 0; n < 4; n++) {
      await db.knex.transaction((trx) => enqueueEntityChange(trx, unitChange(party, n % 2)));
    }
  }
  recorder = await planRecorder(db.url);
});

afterAll(async () => {
  await recorder?.destroy();
  await db?.drop();
});

/** The partitions each bucket table's plans touched, over all of `plans`. */
function touched(plans: readonly StatementPlan[]): Record<string, number[]> {
  const tables = new Map<string, Set<number>>();
  for (const plan of plans) {
    for (const [table, partitions] of plan.partitions) {
      for (const partition of partitions) {
        if (!tables.has(table)) tables.set(table, new Set());
        tables.get(table)!.add(partition);
      }
    }
  }
  return Object.fromEntries(
    [...tables].sort(([a], [b]) => a.localeCompare(b)).map(([t, set]) => [t, [...set]]),
  );
}

/**
 * The bucket tables each hot entry point reads or updates (docs/scaling.md › The hot statements on
 * Citus), each in the one partition of the call's bucket: a statement that stopped pinning the
 * bucket adds partitions, and one that stopped reading a table (or a recorder that saw nothing)
 * drops it. An `INSERT` routes each row by the bucket it carries and scans nothing, so the
 * enqueue's webhooks do not appear (its groups do: the upsert's conflict check and the join).
 */
const TABLES: Record<string, string[]> = {
  enqueue: ['webhook_events', 'webhook_groups', 'webhook_registrations'],
  replay: ['webhook_events', 'webhook_groups', 'webhook_registrations'],
  claim: ['webhook_events', 'webhook_registrations', 'webhook_targets', 'webhooks'],
  complete: ['webhook_groups', 'webhook_registrations', 'webhook_targets', 'webhooks'],
  releaseClaims: ['webhooks'],
  claimNotified: ['webhook_events', 'webhook_registrations', 'webhook_targets', 'webhooks'],
  operatorApply: ['webhook_groups', 'webhook_registrations', 'webhook_targets', 'webhooks'],
  releaseGroups: ['webhook_groups', 'webhook_registrations', 'webhook_targets', 'webhooks'],
  abortRegistration: ['webhook_groups', 'webhooks'],
  prune: ['webhooks'],
};

describe('the hot statements on the bucket layout', () => {
  it('are seen by the recorder, nested ones too: a statement that pins the bucket reads one partition, one that does not reads them all', async () => {
    const bucket = (await db.knex('parties').where({ id: tenants[0]!.party }).first('bucket'))
      .bucket as number;
    await db.knex.raw(`
      create function plans_probe(p_bucket int) returns bigint language plpgsql as $$
      declare n bigint;
      begin
        select count(*) into n from webhooks w join webhook_registrations r on r.bucket = w.bucket and r.id = w.registration_id
         where w.bucket = p_bucket;
        return n;
      end $$`);
    const { plans } = await recorder.record((knex) => knex.raw('select plans_probe(?)', [bucket]));
    const nested = plans.find((plan) => plan.query.startsWith('select count(*)'))!;
    expect([...nested.partitions.keys()].sort()).toEqual(['webhook_registrations', 'webhooks']);
    expect([...nested.partitions.values()].map((set) => set.size)).toEqual([1, 1]);
    const { plans: all } = await recorder.record((knex) => knex.raw('select count(*) from webhooks'));
    expect(all[0]!.partitions.get('webhooks')!.size).toBe(PARTITIONS);
    expect(spread(all)).toEqual(['select count(*) from webhooks']);
  });

  it('each touch one partition of every bucket table they read: the partition of the bucket, or shard group, of the call', async () => {
    const tenant = tenants[0]!;
    const report: Record<string, Record<string, number[]>> = {};
    const { plans: enqueue } = await recorder.record((knex) =>
      knex.transaction((trx) => enqueueEntityChange(trx, unitChange(tenant.party, 1))),
    );
    report.enqueue = touched(enqueue);
    const change = await db.knex('entity_changes').where({ initiator_party_id: tenant.party }).first('id');
    const { plans: replay } = await recorder.record((knex) =>
      knex.transaction((trx) =>
        replayEntityChanges(trx, {
          registration: { id: tenant.grouped, bucket: tenant.bucket },
          changeIds: [change.id],
          actionId: null,
        }),
      ),
    );
    report.replay = touched(replay);
    const group = [tenant.bucket];
    const { result: claimed, plans: claimPlans } = await recorder.record((knex) =>
      claim(knex, { batch: 64, leaseMs: 60_000, dispatcherId: 'plans', buckets: group }),
    );
    report.claim = touched(claimPlans);
    const own = claimed.filter(
      (w) => w.registration_id === tenant.grouped || w.registration_id === tenant.plain,
    );
    const { plans: complete } = await recorder.record((knex) =>
      completeWebhooks(
        knex,
        { dispatcherId: 'plans', leaseMs: 60_000, policy: TEST_HEALTH_POLICY, buckets: group },
        own.map((w, i) =>
          attemptResult(
            w,
            i % 2 === 0
              ? {}
              : { state: WebhookState.Retrying, statusCode: 500, retryDelayMs: 0, releasesGroup: false },
          ),
        ),
      ),
    );
    report.complete = touched(complete);
    expect(own.length).toBe(claimed.length);
    // another tenant's claimed webhooks, still leased
    const other = tenants[1]!;
    const leased = await claim(db.knex, {
      batch: 64,
      leaseMs: 60_000,
      dispatcherId: 'plans',
      buckets: [other.bucket],
    });
    expect(leased.length).toBeGreaterThan(0);
    const { plans: release } = await recorder.record((knex) =>
      releaseClaims(
        knex,
        'plans',
        leased.map((w) => w.id),
        [other.bucket],
      ),
    );
    report.releaseClaims = touched(release);
    const ids = await db
      .knex('webhooks')
      .whereIn('registration_id', [tenant.grouped, tenant.plain])
      .pluck('id');
    const { plans: notified } = await recorder.record((knex) =>
      claimNotifiedWebhooks(knex, {
        ids,
        dispatcherId: 'plans',
        leaseMs: 60_000,
        fullTargets: [],
        origins: [],
        originHeld: [],
        buckets: group,
      }),
    );
    report.claimNotified = touched(notified);
    const { plans: apply } = await recorder.record((knex) =>
      knex.transaction((trx) =>
        applyOperatorAction(trx, {
          action: 'abort',
          ids,
          actionId: null,
          now: new Date(),
          buckets: group,
        }),
      ),
    );
    report.operatorApply = touched(apply);
    const { group_key: groupKey } = await db
      .knex('webhook_groups')
      .where({ registration_id: tenant.grouped })
      .first('group_key');
    const { plans: groupRelease } = await recorder.record((knex) =>
      knex.transaction((trx) => releaseGroups(trx, [{ registrationId: tenant.grouped, groupKey }], group)),
    );
    report.releaseGroups = touched(groupRelease);
    const { plans: abort } = await recorder.record((knex) =>
      knex.transaction((trx) =>
        abortRegistrationWebhooks(trx, { id: tenant.plain, bucket: tenant.bucket }, new Date()),
      ),
    );
    report.abortRegistration = touched(abort);
    const { plans: prune } = await recorder.record((knex) =>
      pruneWebhooksStep(knex, { olderThanMs: 0, after: 0, scan: 100, buckets: group }),
    );
    report.prune = touched(prune);
    const ownPartition = await bucketPartition(db.knex, 'webhooks', PARTITIONS, tenant.bucket);
    const others = await bucketPartition(db.knex, 'webhooks', PARTITIONS, other.bucket);
    expect(report).toEqual(
      Object.fromEntries(
        Object.entries(TABLES).map(([entry, tables]) => [
          entry,
          Object.fromEntries(
            tables.map((table) => [table, [entry === 'releaseClaims' ? others : ownPartition]]),
          ),
        ]),
      ),
    );
  });
});
