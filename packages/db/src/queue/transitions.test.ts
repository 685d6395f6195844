import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  canTransition,
  WEBHOOK_TRANSITIONS,
  WebhookState,
  type WebhookTransitionCause,
} from '@platform/shared';
import { createKnex, type Knex } from '../knex';
import { createTestDatabase, seedParty, setWebhookState, type TestDatabase } from '@platform/testkit';
import { abortRegistrationWebhooks } from './abort-registration-webhooks';
import type { ClaimedWebhook } from './claim';
import { completeWebhooks, type AttemptResult } from './complete';
import { enqueueEntityChange } from './enqueue';
import { claim as claimAll, TEST_HEALTH_POLICY, unitChange } from '../../tests/queue';
import { pruneWebhooksStep } from './prune';
import { releaseClaims } from './release-claims';
import { FIRST_GROUP, findGroupsToRepair, repairGroups } from './repair';
import { applyOperatorAction } from './operator-apply';

/**
 * Proves the queue's SQL makes only the state changes the shared table allows: a trigger records
 * every state a webhook is written in or moved to, labelled with the queue operation that ran
 * (a session setting on the test's one connection), while every operation of the queue is driven
 * through its own function. Each recorded change must be in the table under a cause that
 * operation may stand for; and every row of the table must have been seen, so the drive covers
 * the whole machine.
 */

/** Which causes of the table each driven operation may stand for. */
const OPERATIONS = {
  enqueue: ['enqueue'],
  claim: ['claim'],
  complete: ['delivery', 'release'],
  'release-claims': [],
  'operator-end': ['operator', 'release'],
  'operator-retry': ['operator'],
  'registration-delete': ['registration-delete'],
  repair: ['repair'],
  prune: [],
  // the test's own arrangements (a registration deleted behind the queue's back, a drifted
  // open_count): they must not change a state
  arrange: [],
} as const satisfies Record<string, readonly WebhookTransitionCause[]>;
type Operation = keyof typeof OPERATIONS;

interface Observed {
  operation: Operation;
  from_state: WebhookState | null;
  to_state: WebhookState;
}

const { Created, Retrying, Successful, Failed, Pending } = WebhookState;
const ME = 'dispatcher-1';

let db: TestDatabase;
/** One connection, so the operation label set on its session is the one its statements see. */
let knex: Knex;
let partyId: number;

async function run<T>(operation: Operation, work: () => Promise<T>): Promise<T> {
  await knex.raw(`select set_config('transitions.operation', ?, false)`, [operation]);
  try {
    return await work();
  } finally {
    await knex.raw(`select set_config('transitions.operation', 'arrange', false)`);
  }
}

async function registration(options: { group?: boolean; continueAfterFail?: boolean } = {}) {
  const { rows } = await knex.raw<{ rows: { id: number }[] }>(
    `with r as (
       insert into webhook_registrations (party_id, target_url, should_group, should_group_continue_after_fail, signing_secret)
       values (?, 'http://127.0.0.1:9/hook', ?, ?, 'sealed') returning id
     ), e as (insert into webhook_events (registration_id, entity_name, type) select id, 'Unit', 2 from r)
     select id from r`,
    [partyId, options.group ?? false, options.continueAfterFail ?? false],
  );
  return rows[0]!.id;
}

/** Writes one change of Unit `entityId`: a webhook for every live registration (all subscribe to it). */
async function change(entityId: number): Promise<void> {
  await run('enqueue', () =>
    knex.transaction((trx) => enqueueEntityChange(trx, unitChange(partyId, entityId))),
  );
}

/** The ids of a registration's webhooks, oldest first. */
async function webhooksOf(registrationId: number): Promise<number[]> {
  const rows: { id: number }[] = await knex('webhooks')
    .where({ registration_id: registrationId })
    .orderBy('id')
    .select('id');
  return rows.map((row) => Number(row.id));
}

type Outcome = 'success' | 'retry' | 'fail' | 'hand-back';

/** What a dispatcher records for `outcome`, as the dispatcher's loop builds it. */
function result(webhook: ClaimedWebhook, outcome: Exclude<Outcome, 'hand-back'>): AttemptResult {
  const base = {
    webhookId: webhook.id,
    registrationId: webhook.registration_id,
    targetId: webhook.target_id,
    groupKey: webhook.group_key,
    attempt: webhook.attempt,
    startedAt: new Date(),
    durationMs: 1,
    statusCode: outcome === 'success' ? 200 : 500,
    errorKind: outcome === 'success' ? null : 'status',
    responseBody: null,
  };
  if (outcome === 'success') return { ...base, state: Successful, retryDelayMs: null, releasesGroup: true };
  if (outcome === 'retry') return { ...base, state: Retrying, retryDelayMs: 0, releasesGroup: false };
  return {
    ...base,
    state: Failed,
    retryDelayMs: null,
    releasesGroup: webhook.should_group_continue_after_fail,
  };
}

/**
 * Records `outcomes` for leased webhooks (success for any other). The group heads the completion
 * leases to the recorder are completed too, unless `follow` is false: then they are answered.
 */
async function complete(
  webhooks: readonly ClaimedWebhook[],
  outcomes: Record<number, Outcome>,
  options: { dispatcherId?: string; follow?: boolean } = {},
): Promise<ClaimedWebhook[]> {
  const dispatcherId = options.dispatcherId ?? ME;
  const back = webhooks.filter((w) => outcomes[w.id] === 'hand-back').map((w) => w.id);
  await run('release-claims', () => releaseClaims(knex, dispatcherId, back));
  const results = webhooks
    .filter((w) => !w.registration_deleted && outcomes[w.id] !== 'hand-back')
    .map((w) => result(w, (outcomes[w.id] ?? 'success') as Exclude<Outcome, 'hand-back'>));
  const { leased } = await run('complete', () =>
    completeWebhooks(knex, { dispatcherId, leaseMs: 60_000, policy: TEST_HEALTH_POLICY }, results),
  );
  if (options.follow === false || leased.length === 0) return leased;
  return complete(leased, outcomes, options);
}

const claim = (options: { leaseMs?: number; dispatcherId?: string } = {}) =>
  run('claim', () =>
    claimAll(knex, {
      batch: 100,
      leaseMs: options.leaseMs ?? 60_000,
      dispatcherId: options.dispatcherId ?? ME,
    }),
  );

/** Claims everything due and records `outcomes` (success for any other webhook). */
async function deliver(
  outcomes: Record<number, Outcome>,
  options: { follow?: boolean } = {},
): Promise<ClaimedWebhook[]> {
  return complete(await claim(), outcomes, options);
}

async function operator(id: number, action: 'abort' | 'resolve' | 'retry'): Promise<void> {
  await run(action === 'retry' ? 'operator-retry' : 'operator-end', () =>
    knex.transaction((trx) =>
      applyOperatorAction(trx, { action, ids: [id], actionId: null, now: new Date() }),
    ),
  );
}

/** A registration deleted without the API: its webhooks keep their states (a racing enqueue). */
const deleteBehindTheQueue = (registrationId: number) =>
  knex('webhook_registrations').where({ id: registrationId }).update({ deleted: new Date() });

const observed = async (): Promise<Observed[]> =>
  knex('observed_transitions').orderBy('id').select('operation', 'from_state', 'to_state');

beforeAll(async () => {
  db = await createTestDatabase();
  knex = createKnex(db.url, { pool: { min: 1, max: 1 } });
  await knex.raw(`
    create table observed_transitions (
      id serial primary key, operation text not null, from_state smallint, to_state smallint not null
    );
    create function record_transition() returns trigger language plpgsql as $$
    begin
      if tg_op = 'INSERT' or old.state is distinct from new.state then
        insert into observed_transitions (operation, from_state, to_state)
        values (coalesce(nullif(current_setting('transitions.operation', true), ''), 'arrange'),
                case when tg_op = 'UPDATE' then old.state end, new.state);
      end if;
      return null;
    end $$;
    create trigger record_transition after insert or update on webhooks
      for each row execute function record_transition();
  `);
  partyId = await seedParty(knex);
});
afterAll(async () => {
  await knex?.destroy();
  await db?.drop();
});

describe('the queue follows the shared state machine', () => {
  it('catches a change the table does not allow (the check can fail)', async () => {
    const plain = await registration();
    await change(1);
    const [id] = await webhooksOf(plain);
    await setWebhookState(knex, id!, Successful);
    await setWebhookState(knex, id!, Created);
    const forbidden = (await observed()).filter((o) => !canTransition(o.from_state, o.to_state));
    expect(forbidden).toEqual([{ operation: 'arrange', from_state: Successful, to_state: Created }]);
    await knex.raw('truncate webhooks, webhook_groups, observed_transitions cascade');
  });

  it('makes only allowed changes, and every allowed change, when every operation runs', async () => {
    // ungrouped deliveries: success, retries, failures, a hand-back, then operators on each state
    const plain = await registration();
    for (let entity = 1; entity <= 6; entity++) await change(100 + entity);
    const [a1, a2, a3, a4, a5, a6] = await webhooksOf(plain);
    await deliver({
      [a1!]: 'success',
      [a2!]: 'retry',
      [a3!]: 'retry',
      [a4!]: 'fail',
      [a5!]: 'retry',
      [a6!]: 'hand-back',
    });
    await deliver({ [a2!]: 'success', [a3!]: 'retry', [a5!]: 'fail', [a6!]: 'fail' });
    await operator(a3!, 'resolve');
    await operator(a4!, 'abort');
    await operator(a5!, 'resolve');
    await operator(a6!, 'retry');
    await operator(a6!, 'abort');
    await change(107);
    await change(108);
    const [b1, b2] = (await webhooksOf(plain)).slice(6);
    await operator(b1!, 'abort');
    await operator(b2!, 'resolve');

    // a group that blocks on failure: Pending ones leave the chain, the Failed head is retried,
    // fails again and is aborted, which releases the group
    const grouped = await registration({ group: true });
    for (let i = 0; i < 3; i++) await change(200);
    const [g1, g2, g3] = await webhooksOf(grouped);
    await operator(g2!, 'abort');
    await operator(g3!, 'resolve');
    await change(200);
    await deliver({ [g1!]: 'fail' });
    await operator(g1!, 'retry');
    await deliver({ [g1!]: 'fail' });
    await operator(g1!, 'abort');
    await deliver({});

    // continue-after-fail: the failure releases the group (its next is leased to the recorder),
    // and a retry of the Failed one re-enters the group as Pending
    const continuing = await registration({ group: true, continueAfterFail: true });
    await change(300);
    await change(300);
    const [k1] = await webhooksOf(continuing);
    const leased = await deliver({ [k1!]: 'fail' }, { follow: false });
    await operator(k1!, 'retry');
    await complete(leased, {});
    await deliver({});

    // deleting a registration aborts what it had in every undelivered state
    const deleted = await registration({ group: true });
    await change(401);
    await change(401);
    await change(402);
    await change(403);
    const [d1, , d3, d4] = await webhooksOf(deleted);
    await deliver({ [d1!]: 'hand-back', [d3!]: 'retry', [d4!]: 'fail' });
    await run('registration-delete', () =>
      knex.transaction((trx) => abortRegistrationWebhooks(trx, deleted, new Date())),
    );

    // a registration deleted while its webhooks were being written: the claim aborts them
    const raced = await registration();
    await change(501);
    const [x1] = await webhooksOf(raced);
    await deliver({ [x1!]: 'retry' });
    await change(502);
    await deleteBehindTheQueue(raced);
    await deliver({});

    // ... and a release that would lease the next of such a group aborts it
    const racedGroup = await registration({ group: true });
    await change(601);
    await change(601);
    const claimed = await claim();
    await deleteBehindTheQueue(racedGroup);
    await complete(claimed, {});

    // a group stranded by a drifted open_count: the repair sweep promotes its next
    const stranded = await registration({ group: true });
    await change(701);
    await change(701);
    await knex('webhook_groups').where({ registration_id: stranded }).update({ open_count: 0 });
    await deliver({});
    await run('repair', async () => {
      const { groups } = await findGroupsToRepair(knex, { after: FIRST_GROUP, limit: 100 });
      await repairGroups(knex, groups);
    });
    await deliver({});

    // a lease that runs out: another dispatcher claims the webhook, the first one's result is ignored
    await registration();
    await change(801);
    const first = await claim({ leaseMs: 0 });
    const second = await claim({ dispatcherId: 'dispatcher-2' });
    const ids = (claimed: ClaimedWebhook[]) => claimed.map((w) => w.id).sort((a, b) => a - b);
    expect(ids(second)).toEqual(ids(first));
    await complete(first, {});
    await complete(second, {}, { dispatcherId: 'dispatcher-2' });

    await run('prune', () => pruneWebhooksStep(knex, { olderThanMs: -60_000, after: 0, scan: 1000 }));

    const changes = await observed();
    const forbidden = changes.filter(
      (o) =>
        !(OPERATIONS[o.operation] as readonly WebhookTransitionCause[]).some((by) =>
          canTransition(o.from_state, o.to_state, by),
        ),
    );
    expect(forbidden).toEqual([]);
    const unseen = WEBHOOK_TRANSITIONS.filter(
      (t) =>
        !changes.some(
          (o) =>
            o.from_state === t.from &&
            o.to_state === t.to &&
            (OPERATIONS[o.operation] as readonly WebhookTransitionCause[]).includes(t.by),
        ),
    );
    expect(unseen).toEqual([]);
    // nothing is left open that the drive did not mean to leave
    const open = await knex.raw<{ rows: { n: number }[] }>(
      `select count(*)::int as n from webhooks where state in (?, ?, ?)`,
      [Created, Retrying, Pending],
    );
    expect(open.rows[0]!.n).toBe(0);
  });
});
