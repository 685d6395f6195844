import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  BREAKER_TRANSITIONS,
  WebhookState,
  type BreakerState,
  type BreakerTransitionCause,
} from '@platform/shared';
import { createTestDatabase, type TestDatabase } from '@platform/testkit';
import { createKnex, type Knex } from '../knex';
import type { ClaimedWebhook } from './claim';
import { completeWebhooks } from './complete';
import {
  attemptResult,
  backlog,
  claimAs,
  ownRegistration,
  setBreaker,
  TEST_HEALTH_POLICY,
} from './queue-test-support';
import { halfOpenTargetOf } from './registration-status';

/**
 * Proves the SQL makes only the breaker changes the shared table allows (`BREAKER_TRANSITIONS`),
 * as `transitions.test.ts` does for the webhook states: a trigger records every state a target is
 * written in or moved to, labelled with the operation that ran (a session setting on the test's
 * one connection). Each recorded change must be in the table under a cause that operation may
 * stand for, and every row of the table must have been seen.
 */

/** Which causes of the table each driven operation may stand for. */
const OPERATIONS = {
  registration: ['registration'],
  enqueue: [],
  claim: ['claim'],
  complete: ['delivery'],
  operator: ['operator'],
  // the test's own arrangements (a cool-down cut short): they must not change a state
  arrange: [],
} as const satisfies Record<string, readonly BreakerTransitionCause[]>;
type Operation = keyof typeof OPERATIONS;

interface Observed {
  operation: Operation;
  from_state: BreakerState | null;
  to_state: BreakerState;
}

let db: TestDatabase;
/** One connection, so the operation label set on its session is the one its statements see. */
let knex: Knex;

async function run<T>(operation: Operation, work: () => Promise<T>): Promise<T> {
  await knex.raw(`select set_config('transitions.operation', ?, false)`, [operation]);
  try {
    return await work();
  } finally {
    await knex.raw(`select set_config('transitions.operation', 'arrange', false)`);
  }
}

const allowed = (o: Observed) =>
  (OPERATIONS[o.operation] as readonly BreakerTransitionCause[]).some((by) =>
    BREAKER_TRANSITIONS.some((t) => t.from === o.from_state && t.to === o.to_state && t.by === by),
  );

const observed = async (): Promise<Observed[]> =>
  knex('observed_breaker_transitions').orderBy('id').select('operation', 'from_state', 'to_state');

/** A registration of an origin of its own (a new target) with `count` due webhooks. */
async function target(origin: string, count: number) {
  const registration = await run('registration', () => ownRegistration(knex, `${origin}/hook`));
  await run('enqueue', () => backlog(knex, registration, count));
  return registration;
}

const claim = async () => (await run('claim', () => claimAs(knex, { batch: 100 }))).leased;

/** Records a 2xx, or a 500 (a target failure), for each webhook, in one batch. */
const record = (webhooks: ClaimedWebhook[], answer: 'ok' | 'down') =>
  run('complete', () =>
    completeWebhooks(
      knex,
      { dispatcherId: 'd1', leaseMs: 60_000, policy: TEST_HEALTH_POLICY },
      webhooks.map((webhook) =>
        answer === 'ok'
          ? attemptResult(webhook)
          : attemptResult(webhook, {
              state: WebhookState.Retrying,
              retryDelayMs: 600_000,
              releasesGroup: false,
              statusCode: 500,
              errorKind: 'status',
            }),
      ),
    ),
  );

const ofTarget = (webhooks: ClaimedWebhook[], targetId: number) =>
  webhooks.filter((w) => w.target_id === targetId).sort((a, b) => a.id - b.id);

/** One more due webhook for an open breaker, whose cool-down is cut short: the next claim's trial. */
async function trialOf(registration: { id: number; partyId: number; targetId: number }) {
  await run('enqueue', () => backlog(knex, registration, 1));
  await setBreaker(knex, registration.targetId, 'open', { openForSeconds: -1 });
}

beforeAll(async () => {
  db = await createTestDatabase();
  knex = createKnex(db.url, { pool: { min: 1, max: 1 } });
  await knex.raw(`
    create table observed_breaker_transitions (
      id serial primary key, operation text not null, from_state text, to_state text not null
    );
    create function record_breaker_transition() returns trigger language plpgsql as $$
    begin
      if tg_op = 'INSERT' or old.breaker_state is distinct from new.breaker_state then
        insert into observed_breaker_transitions (operation, from_state, to_state)
        values (coalesce(nullif(current_setting('transitions.operation', true), ''), 'arrange'),
                case when tg_op = 'UPDATE' then old.breaker_state end, new.breaker_state);
      end if;
      return null;
    end $$;
    create trigger record_breaker_transition after insert or update on webhook_targets
      for each row execute function record_breaker_transition();
  `);
});
afterAll(async () => {
  await knex?.destroy();
  await db?.drop();
});

describe('the breaker follows the shared state machine', () => {
  it('catches a change the table does not allow (the check can fail)', async () => {
    const { targetId } = await target('http://127.0.0.1:1', 0);
    await setBreaker(knex, targetId, 'half-open');
    expect((await observed()).filter((o) => !allowed(o))).toEqual([
      { operation: 'arrange', from_state: 'closed', to_state: 'half-open' },
    ]);
    await knex.raw('truncate observed_breaker_transitions');
  });

  it('makes only allowed changes, and every allowed change, when every operation runs', async () => {
    // three target failures in one batch open a closed breaker; a request sent before it opened
    // then comes back answered, which closes it
    const a = await target('http://127.0.0.1:2', 4);
    const [a1, a2, a3, a4] = ofTarget(await claim(), a.targetId);
    await record([a1!, a2!, a3!], 'down');
    await record([a4!], 'ok');

    // opened again; after the cool-down the claim takes a trial (half-open), which succeeds
    const b = await target('http://127.0.0.1:3', 3);
    await record(ofTarget(await claim(), b.targetId), 'down');
    await trialOf(b);
    await record(ofTarget(await claim(), b.targetId), 'ok');

    // a trial that fails opens it again; an operator then half-opens it
    const c = await target('http://127.0.0.1:4', 3);
    await record(ofTarget(await claim(), c.targetId), 'down');
    await trialOf(c);
    await record(ofTarget(await claim(), c.targetId), 'down');
    await run('operator', () => halfOpenTargetOf(knex, c.id));

    const changes = await observed();
    expect(changes.filter((o) => !allowed(o))).toEqual([]);
    const unseen = BREAKER_TRANSITIONS.filter(
      (t) =>
        !changes.some(
          (o) =>
            o.from_state === t.from &&
            o.to_state === t.to &&
            (OPERATIONS[o.operation] as readonly BreakerTransitionCause[]).includes(t.by),
        ),
    );
    expect(unseen).toEqual([]);
  });
});
