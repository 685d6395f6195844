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

const PARTITIONS = 8;

let db: TestDatabase;
let recorder: PlanRecorder;
/** Three tenants, each in a partition of its own, each with a grouped and a plain registration. */
const tenants: { party: number; grouped: number; plain: number }[] = [];

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
    tenants.push({ party, grouped: grouped.id, plain: plain.id });
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

/** The statements of `plans` that touch several partitions, each once, by the start of its text. */
const spreadOf = (plans: StatementPlan[]) =>
  [...new Set(spread(plans).map((query) => query.slice(0, 64)))].sort();

/**
 * What the hot entry points still touch in more than one partition, by statement (the start of
 * its text), measured on this layout with custom plans. Each leaves when its statement carries
 * the bucket (docs/scaling.md › From one database to Citus, step 4: R2, `bucket = p_bucket`, or
 * the shard group's buckets for the dispatcher's statements) and the dispatcher claims per shard
 * group (step 5); the list must then be empty. A statement that starts to touch several
 * partitions, or one that stops, changes the list and fails the test.
 */
const KNOWN: Record<string, string[]> = {
  enqueue: [
    'insert into webhooks (registration_id, event_id, entity_change_i',
    'select array_agg(s.registration_id order by s.registration_id), ',
  ],
  replay: [
    'insert into webhooks (registration_id, event_id, entity_change_i',
    'select "should_group", "deleted", "bucket" from "webhook_registr',
    'select array_agg(s.registration_id order by s.registration_id), ',
  ],
  claim: [
    '( with w as materialized ( select w.id, w.registration_id, w.att',
    'with prior as ( select w.id, w.locked_by is not null as was_leas',
    'with recursive cursor as ( select p_after as after, p_batch as b',
  ],
  complete: [
    'SELECT 1 from webhook_groups g join (select distinct registratio',
    'reg_changing := array( select g.id from webhook_registrations g ',
    'tgt_changing := array( select t.id from webhook_targets t join (',
    'with n as ( select g.id, g.party_id, g.target_url, g.status as w',
    'with n as ( select t.id, a.any_success, a.any_answer, a.tail_fai',
    'with results as ( select r.*, v_now + make_interval(secs => r.re',
  ],
  releaseClaims: ['update webhooks -- now() outside the CASE (Citus refuses a stabl'],
  claimNotified: [
    '( with w as materialized ( select w.id, w.registration_id, w.att',
    "select coalesce(array_agg(x.id order by x.id), '{}') from ( sele",
    'select count(*) from unnest(p_ids) as n(id) cross join lateral (',
    'with prior as ( select w.id, w.locked_by is not null as was_leas',
  ],
  operatorApply: [
    'SELECT 1 from webhook_groups g join (select distinct * from unne',
    'SELECT 1 from webhook_groups g join (select distinct x.registrat',
    'select x.id, x.registration_id, x.state, x.group_key, r.target_i',
    'update webhook_groups set open_count = greatest(open_count - 1, ',
    "update webhooks set state = case p_action when 'abort' then 5 el",
    'with released as ( select distinct registration_id, group_key fr',
  ],
  abortRegistration: [
    'select "group_key" from "webhook_groups" where "registration_id"',
    'update "webhook_groups" set "open_count" = $1 where "registratio',
    'update "webhooks" set "state" = $1, "completed_at" = $2, "last_m',
  ],
  prune: ['with cutoff as (select now() - make_interval(secs => $1 / 1000.0'],
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

  it('touch more than one partition only in the statements known to lack the bucket', async () => {
    const tenant = tenants[0]!;
    const report: Record<string, string[]> = {};
    const { plans: enqueue } = await recorder.record((knex) =>
      knex.transaction((trx) => enqueueEntityChange(trx, unitChange(tenant.party, 1))),
    );
    report.enqueue = spreadOf(enqueue);
    const change = await db.knex('entity_changes').where({ initiator_party_id: tenant.party }).first('id');
    const { plans: replay } = await recorder.record((knex) =>
      knex.transaction((trx) =>
        replayEntityChanges(trx, { registrationId: tenant.grouped, changeIds: [change.id], actionId: null }),
      ),
    );
    report.replay = spreadOf(replay);
    const { result: claimed, plans: claimPlans } = await recorder.record((knex) =>
      claim(knex, { batch: 64, leaseMs: 60_000, dispatcherId: 'plans' }),
    );
    report.claim = spreadOf(claimPlans);
    const own = claimed.filter(
      (w) => w.registration_id === tenant.grouped || w.registration_id === tenant.plain,
    );
    const { plans: complete } = await recorder.record((knex) =>
      completeWebhooks(
        knex,
        { dispatcherId: 'plans', leaseMs: 60_000, policy: TEST_HEALTH_POLICY },
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
    report.complete = spreadOf(complete);
    // another tenant's claimed webhooks, still leased
    const other = tenants[1]!;
    const leased = claimed.filter(
      (w) => w.registration_id === other.grouped || w.registration_id === other.plain,
    );
    expect(leased.length).toBeGreaterThan(0);
    const { plans: release } = await recorder.record((knex) =>
      releaseClaims(
        knex,
        'plans',
        leased.map((w) => w.id),
      ),
    );
    report.releaseClaims = spreadOf(release);
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
      }),
    );
    report.claimNotified = spreadOf(notified);
    const { plans: apply } = await recorder.record((knex) =>
      knex.transaction((trx) =>
        applyOperatorAction(trx, { action: 'abort', ids, actionId: null, now: new Date() }),
      ),
    );
    report.operatorApply = spreadOf(apply);
    const { plans: abort } = await recorder.record((knex) =>
      knex.transaction((trx) => abortRegistrationWebhooks(trx, tenant.plain, new Date())),
    );
    report.abortRegistration = spreadOf(abort);
    const { plans: prune } = await recorder.record((knex) =>
      pruneWebhooksStep(knex, { olderThanMs: 0, after: 0, scan: 100 }),
    );
    report.prune = spreadOf(prune);
    expect(report).toEqual(KNOWN);
  });
});
