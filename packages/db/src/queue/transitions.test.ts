import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  BREAKER_TRANSITIONS,
  canTransition,
  WEBHOOK_TRANSITIONS,
  WebhookState,
  type BreakerTransitionCause,
  type WebhookTransitionCause,
} from '@platform/shared';
import { createKnex, type Knex } from '../knex';
import { createTestDatabase, seedParty, setWebhookState, type TestDatabase } from '@platform/testkit';
import { abortRegistrationWebhooks } from './abort-registration-webhooks';
import type { ClaimedWebhook } from './claim';
import { completeWebhooks, type AttemptResult } from './complete';
import { enqueueEntityChange } from './enqueue';
import {
  attemptResult,
  backlog,
  claim as claimAll,
  ownRegistration,
  setBreaker,
  TEST_HEALTH_POLICY,
  unitChange,
} from '../../tests/queue';
import { pruneWebhooksStep } from './prune';
import { halfOpenTargetOf } from './registration-status';
import { releaseClaims } from './release-claims';
import { FIRST_GROUP, findGroupsToRepair, repairGroups } from './repair';
import { applyOperatorAction } from './operator-apply';

/**
 * Proves the queue's SQL makes only the state changes the shared tables allow, for a webhook's
 * state (`WEBHOOK_TRANSITIONS`) and a target's breaker (`BREAKER_TRANSITIONS`): a trigger records
 * every state a row is written in or moved to, labelled with the operation that ran (a session
 * setting on the test's one connection), while every operation is driven through its own
 * function. Each recorded change must be in the table under a cause that operation may stand
 * for; and every row of the table must have been seen, so the drive covers the whole machine.
 */

/** Which causes of the webhook table each driven operation may stand for. */
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

/** Which causes of the breaker table each driven operation may stand for. */
const BREAKER_OPERATIONS = {
  registration: ['registration'],
  enqueue: [],
  claim: ['claim'],
  complete: ['delivery'],
  operator: ['operator'],
  arrange: [],
} as const satisfies Record<string, readonly BreakerTransitionCause[]>;
type Operation = keyof typeof OPERATIONS | keyof typeof BREAKER_OPERATIONS;

interface Observed {
  operation: Operation;
  from_state: string | null;
  to_state: string;
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
       insert into webhook_registrations
         (party_id, bucket, target_url, should_group, should_group_continue_after_fail, signing_secret)
       values (?, (select bucket from parties where id = ?), 'http://127.0.0.1:9/hook', ?, ?, 'sealed')
       returning id, bucket
     ), e as (
       insert into webhook_events (registration_id, bucket, entity_name, type) select id, bucket, 'Unit', 2 from r
     )
     select id from r`,
    [partyId, partyId, options.group ?? false, options.continueAfterFail ?? false],
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
  if (outcome === 'success') return attemptResult(webhook);
  const failure = { statusCode: 500, errorKind: 'status', responseBody: null };
  if (outcome === 'retry')
    return attemptResult(webhook, { ...failure, state: Retrying, retryDelayMs: 0, releasesGroup: false });
  return attemptResult(webhook, {
    ...failure,
    state: Failed,
    retryDelayMs: null,
    releasesGroup: webhook.should_group_continue_after_fail,
  });
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

/** The changes recorded on `table` (`webhooks`, `webhook_targets`), states as text. */
const observed = async (table: string): Promise<Observed[]> =>
  knex('observed_transitions').where({ table }).orderBy('id').select('operation', 'from_state', 'to_state');

/** The webhook changes, states as numbers. */
const observedWebhooks = async () =>
  (await observed('webhooks')).map((o) => ({
    operation: o.operation,
    from_state: o.from_state === null ? null : (Number(o.from_state) as WebhookState),
    to_state: Number(o.to_state) as WebhookState,
  }));

/**
 * Checks recorded changes against a transition table: `forbidden`, the changes no cause of their
 * operation allows; `unseen`, the rows of the table no change stood for.
 */
function check<T extends { from: unknown; to: unknown; by: string }>(
  transitions: readonly T[],
  operations: Partial<Record<Operation, readonly string[]>>,
  changes: readonly { operation: Operation; from_state: unknown; to_state: unknown }[],
) {
  const stands = (o: (typeof changes)[number], t: T) =>
    o.from_state === t.from && o.to_state === t.to && (operations[o.operation] ?? []).includes(t.by);
  return {
    forbidden: changes.filter((o) => !transitions.some((t) => stands(o, t))),
    unseen: transitions.filter((t) => !changes.some((o) => stands(o, t))),
  };
}

beforeAll(async () => {
  db = await createTestDatabase();
  knex = createKnex(db.url, { pool: { min: 1, max: 1 } });
  await knex.raw(`
    create table observed_transitions (
      id serial primary key, "table" text not null, operation text not null,
      from_state text, to_state text not null
    );
    -- tg_argv[0]: the state column
    create function record_transition() returns trigger language plpgsql as $$
    declare
      v_from text := case when tg_op = 'UPDATE' then to_jsonb(old) ->> tg_argv[0] end;
      v_to text := to_jsonb(new) ->> tg_argv[0];
    begin
      if tg_op = 'INSERT' or v_from is distinct from v_to then
        insert into observed_transitions ("table", operation, from_state, to_state)
        values (tg_table_name, coalesce(nullif(current_setting('transitions.operation', true), ''), 'arrange'),
                v_from, v_to);
      end if;
      return null;
    end $$;
    create trigger record_transition after insert or update on webhooks
      for each row execute function record_transition('state');
    create trigger record_transition after insert or update on webhook_targets
      for each row execute function record_transition('breaker_state');
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
    const forbidden = (await observedWebhooks()).filter((o) => !canTransition(o.from_state, o.to_state));
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
      knex.transaction(async (trx) =>
        abortRegistrationWebhooks(
          trx,
          await trx('webhook_registrations').where({ id: deleted }).first('id', 'bucket'),
          new Date(),
        ),
      ),
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

    const { forbidden, unseen } = check(WEBHOOK_TRANSITIONS, OPERATIONS, await observedWebhooks());
    expect(forbidden).toEqual([]);
    expect(unseen).toEqual([]);
    // nothing is left open that the drive did not mean to leave
    const open = await knex.raw<{ rows: { n: number }[] }>(
      `select count(*)::int as n from webhooks where state in (?, ?, ?)`,
      [Created, Retrying, Pending],
    );
    expect(open.rows[0]!.n).toBe(0);
  });
});

describe('the breaker follows the shared state machine', () => {
  /** A registration of an origin of its own (a new target, closed) with `count` due webhooks. */
  async function target(origin: string, count: number) {
    const registration = await run('registration', () => ownRegistration(knex, `${origin}/hook`));
    await run('enqueue', () => backlog(knex, registration, count));
    return registration;
  }
  const ofTarget = (webhooks: ClaimedWebhook[], targetId: number) =>
    webhooks.filter((w) => w.target_id === targetId).sort((a, b) => a.id - b.id);
  /** Records a 500 (a target failure) for each webhook, in one batch. */
  const down = (webhooks: ClaimedWebhook[]) =>
    complete(webhooks, Object.fromEntries(webhooks.map((w) => [w.id, 'retry'])), { follow: false });
  /** Cuts an open breaker's cool-down short: the next claim takes its trial. */
  const coolDownOver = (targetId: number) => setBreaker(knex, targetId, 'open', { openForSeconds: -1 });

  beforeAll(() => knex.raw('truncate observed_transitions'));

  it('catches a change the table does not allow (the check can fail)', async () => {
    const { targetId } = await target('http://127.0.0.1:1', 0);
    await setBreaker(knex, targetId, 'half-open');
    expect(
      check(BREAKER_TRANSITIONS, BREAKER_OPERATIONS, await observed('webhook_targets')).forbidden,
    ).toEqual([{ operation: 'arrange', from_state: 'closed', to_state: 'half-open' }]);
    await knex.raw('truncate observed_transitions');
  });

  it('makes only allowed changes, and every allowed change, when every operation runs', async () => {
    // three target failures in one batch open a closed breaker; a request sent before it opened
    // then comes back answered, which closes it
    const a = await target('http://127.0.0.1:2', 4);
    const [a1, a2, a3, a4] = ofTarget(await claim(), a.targetId);
    await down([a1!, a2!, a3!]);
    await complete([a4!], {}, { follow: false });

    // opened again; after the cool-down the claim takes a trial (half-open), which succeeds
    const b = await target('http://127.0.0.1:3', 4);
    const [b1, b2, b3] = ofTarget(await claim(), b.targetId);
    await down([b1!, b2!, b3!]);
    await coolDownOver(b.targetId);
    await complete(ofTarget(await claim(), b.targetId), {}, { follow: false });

    // a trial that fails opens it again; an operator then half-opens it
    const c = await target('http://127.0.0.1:4', 4);
    const [c1, c2, c3] = ofTarget(await claim(), c.targetId);
    await down([c1!, c2!, c3!]);
    await coolDownOver(c.targetId);
    await down(ofTarget(await claim(), c.targetId));
    await run('operator', () => halfOpenTargetOf(knex, c.id));

    const { forbidden, unseen } = check(
      BREAKER_TRANSITIONS,
      BREAKER_OPERATIONS,
      await observed('webhook_targets'),
    );
    expect(forbidden).toEqual([]);
    expect(unseen).toEqual([]);
  });
});
