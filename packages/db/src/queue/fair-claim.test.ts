import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { WebhookState } from '@platform/shared';
import {
  createTestDatabase,
  eventually,
  truncateWebhooks,
  waitForLockWaiter,
  type TestDatabase,
} from '@platform/testkit';
import type { Knex } from 'knex';
import type { Claim, ClaimedWebhook } from './claim';
import { completeWebhooks } from './complete';
import {
  attemptResult,
  backlog,
  claimAs,
  ownRegistration,
  setBreaker,
  TEST_HEALTH_POLICY,
} from '../../tests/queue';
import { pauseRegistration, resumeRegistration } from './registration-status';

// The fair claim (webhooks_claim) against a real Postgres: what one claim takes from which
// registration and target, and what it says about the rest.

const { Retrying, Failed } = WebhookState;

let db: TestDatabase;
let knex: Knex;

/** Moves webhooks' due time `seconds` from now (a retry scheduled, a lease). */
async function dueIn(ids: number[], seconds: number): Promise<void> {
  await knex('webhooks')
    .whereIn('id', ids)
    .update({ next_attempt_at: knex.raw(`now() + make_interval(secs => ?)`, [seconds]) });
}

const countBy = (leased: readonly ClaimedWebhook[], key: 'target_id' | 'registration_id') => {
  const counts = new Map<number, number>();
  for (const w of leased) counts.set(w[key], (counts.get(w[key]) ?? 0) + 1);
  return counts;
};

const targetRow = (id: number) => knex('webhook_targets').where({ id }).first();

beforeAll(async () => {
  db = await createTestDatabase();
  knex = db.knex;
});
afterAll(() => db.drop());
beforeEach(() => truncateWebhooks(knex));

describe('the fair claim', () => {
  it('interleaves targets: a batch takes all 3 of a small backlog beside a large one, each registration held to its share', async () => {
    const big = await ownRegistration(knex, 'http://127.0.0.1:9/a');
    const small = await ownRegistration(knex, 'http://127.0.0.2:9/b');
    const bigIds = await backlog(knex, big, 100);
    await backlog(knex, small, 3); // written after all of big's: a due-order claim would take none
    // two registrations share a batch of 10: at most 5 each, and the claim says more is due
    const claim = await claimAs(knex, { batch: 10 });
    expect(countBy(claim.leased, 'target_id')).toEqual(
      new Map([
        [big.targetId, 5],
        [small.targetId, 3],
      ]),
    );
    expect(claim.more).toBe(true);
    // within a target, in due order: big's five oldest
    const bigOf = (leased: typeof claim.leased) =>
      leased
        .filter((w) => w.target_id === big.targetId)
        .map((w) => w.id)
        .sort((x, y) => x - y);
    expect(bigOf(claim.leased)).toEqual(bigIds.slice(0, 5));
    // the next claim: big alone has due work, so it takes the whole batch
    const next = await claimAs(knex, { batch: 10 });
    expect(bigOf(next.leased)).toEqual(bigIds.slice(5, 15));
    expect(next.more).toBe(false);
    expect(next.nextDueAt).toBeNull(); // a full batch: more may be due now
  });

  it('locks about a batch of rows over many registrations, not a room of each', async () => {
    const registrations = [];
    for (let i = 0; i < 20; i++)
      registrations.push(await ownRegistration(knex, `http://127.0.0.${i + 1}:9/r`));
    for (const registration of registrations) await backlog(knex, registration, 5);
    const claim = await claimAs(knex, { batch: 10 });
    // one row of ten different targets: the batch spread over them, each held to its share (1)
    expect(claim.leased).toHaveLength(10);
    expect(new Set(claim.leased.map((w) => w.target_id)).size).toBe(10);
    expect(claim.more).toBe(true);
  });

  it('gives a target no more than its room, and says it left work behind', async () => {
    const big = await ownRegistration(knex, 'http://127.0.0.1:9/a');
    const small = await ownRegistration(knex, 'http://127.0.0.2:9/b');
    await backlog(knex, big, 20);
    await backlog(knex, small, 3);
    const none = await claimAs(knex, { batch: 10, rooms: [[big.targetId, 0]] });
    expect(countBy(none.leased, 'target_id')).toEqual(new Map([[small.targetId, 3]]));
    expect(none.cappedTargets).toEqual([big.targetId]);
    // nothing of it was touched
    expect(
      await knex('webhooks').where({ registration_id: big.id }).max('attempt_count as n').first(),
    ).toEqual({
      n: 0,
    });

    const two = await claimAs(knex, { batch: 10, rooms: [[big.targetId, 2]] });
    expect(countBy(two.leased, 'target_id')).toEqual(new Map([[big.targetId, 2]]));
    expect(two.cappedTargets).toEqual([big.targetId]);
    // the default room applies to a target the dispatcher holds nothing of
    const rest = await claimAs(knex, { batch: 10, defaultRoom: 4 });
    expect(countBy(rest.leased, 'target_id')).toEqual(new Map([[big.targetId, 4]]));
  });

  it('makes one party’s registrations of one URL one endpoint, sharing its room; another party’s or another path its own', async () => {
    const a = await ownRegistration(knex, 'http://127.0.0.1:9/a?x=1');
    const same = await ownRegistration(knex, 'HTTP://127.0.0.1:80/a?x=1'.replace(':80', ':9'), {
      partyId: a.partyId,
    });
    const otherPath = await ownRegistration(knex, 'http://127.0.0.1:9/b', { partyId: a.partyId });
    const otherParty = await ownRegistration(knex, 'http://127.0.0.1:9/a?x=1');
    expect(same.targetId).toBe(a.targetId);
    expect(new Set([a.targetId, otherPath.targetId, otherParty.targetId]).size).toBe(3);
    expect(await targetRow(a.targetId)).toMatchObject({
      party_id: a.partyId,
      url: 'http://127.0.0.1:9/a?x=1',
      origin: 'http://127.0.0.1:9',
    });
    const credentials = await ownRegistration(knex, 'https://user:secret@Example.com:443#top');
    expect(await targetRow(credentials.targetId)).toMatchObject({
      url: 'https://example.com/',
      origin: 'https://example.com',
    });

    // one change of the party: a webhook each for a, same and otherPath
    await backlog(knex, a, 5);
    const claim = await claimAs(knex, { batch: 20, rooms: [[a.targetId, 4]] });
    expect(countBy(claim.leased, 'target_id')).toEqual(
      new Map([
        [a.targetId, 4],
        [otherPath.targetId, 5],
      ]),
    );
    expect(claim.cappedTargets).toEqual([a.targetId]);

    // a registration moved to another URL moves to that endpoint of its party
    await knex('webhook_registrations').where({ id: same.id }).update({ target_url: 'http://127.0.0.1:9/b' });
    expect(await knex('webhook_registrations').where({ id: same.id }).first('target_id')).toEqual({
      target_id: otherPath.targetId,
    });
  });

  it('shares a host’s room evenly among its endpoints with due work, less what the dispatcher holds of each', async () => {
    const busy = await ownRegistration(knex, 'http://127.0.0.1:9/busy');
    const quiet = await ownRegistration(knex, 'http://127.0.0.1:9/quiet');
    const elsewhere = await ownRegistration(knex, 'http://127.0.0.2:9/hook');
    for (const registration of [busy, quiet, elsewhere]) await backlog(knex, registration, 20);
    // the host may hold 12 here: 6 per endpoint; the dispatcher holds 6 of busy already
    const claim = await claimAs(knex, {
      batch: 60,
      rooms: [[busy.targetId, 16]],
      held: [[busy.targetId, 6]],
      hostRoom: 12,
    });
    expect(countBy(claim.leased, 'target_id')).toEqual(
      new Map([
        [quiet.targetId, 6],
        [elsewhere.targetId, 12],
      ]),
    );
    expect(claim.cappedTargets.sort()).toEqual([busy.targetId, quiet.targetId, elsewhere.targetId].sort());
  });

  it('never claims a paused or disabled registration, nor spends an attempt of it', async () => {
    const active = await ownRegistration(knex, 'http://127.0.0.1:9/a');
    const paused = await ownRegistration(knex, 'http://127.0.0.2:9/b');
    const disabled = await ownRegistration(knex, 'http://127.0.0.3:9/c');
    await backlog(knex, active, 2);
    const pausedIds = await backlog(knex, paused, 2);
    const disabledIds = await backlog(knex, disabled, 2);
    await knex.transaction((trx) => pauseRegistration(trx, paused.id, new Date()));
    await knex('webhook_registrations')
      .where({ id: disabled.id })
      .update({ status: 'disabled', disabled_reason: 'gone' });

    const claim = await claimAs(knex, { batch: 10 });
    expect(countBy(claim.leased, 'registration_id')).toEqual(new Map([[active.id, 2]]));
    expect(
      await knex('webhooks')
        .whereIn('id', [...pausedIds, ...disabledIds])
        .select('attempt_count', 'locked_by'),
    ).toEqual(Array(4).fill({ attempt_count: 0, locked_by: null }));

    await knex.transaction((trx) => resumeRegistration(trx, paused.id, new Date()));
    const resumed = await claimAs(knex, { batch: 10 });
    expect(countBy(resumed.leased, 'registration_id')).toEqual(new Map([[paused.id, 2]]));
  });

  it('claims an open breaker’s due webhooks in its openTargets, to be recorded circuit-open, without their payloads', async () => {
    const open = await ownRegistration(knex, 'http://127.0.0.1:9/a');
    const healthy = await ownRegistration(knex, 'http://127.0.0.2:9/b');
    await backlog(knex, open, 3);
    await backlog(knex, healthy, 1);
    await setBreaker(knex, open.targetId, 'open', { openForSeconds: 60 });
    const claim = await claimAs(knex, { batch: 10, rooms: [[open.targetId, 0]] });
    // a room of 0 does not hold them back: they need no slot
    expect(countBy(claim.leased, 'target_id')).toEqual(
      new Map([
        [open.targetId, 3],
        [healthy.targetId, 1],
      ]),
    );
    expect(claim.openTargets).toEqual([open.targetId]);
    expect(claim.cappedTargets).toEqual([]);
    expect(claim.leased.every((w) => w.attempt === 1)).toBe(true);
    // recorded without a request, they come without their entity: no payloads built for them
    expect(claim.leased.filter((w) => w.target_id === open.targetId).map((w) => w.entity)).toEqual([
      null,
      null,
      null,
    ]);
    expect(claim.leased.find((w) => w.target_id === healthy.targetId)!.entity).toEqual(expect.any(Object));
    expect(await targetRow(open.targetId)).toMatchObject({ breaker_state: 'open' });
  });

  it('after the cool-down, gives the one trial to one of two concurrent claims, and nothing while it is in flight', async () => {
    const reg = await ownRegistration(knex, 'http://127.0.0.1:9/a');
    await backlog(knex, reg, 3);
    await setBreaker(knex, reg.targetId, 'open', { openForSeconds: -1 });

    // the first claim holds its transaction open while the second runs into the target's row
    let release!: () => void;
    const held = new Promise<void>((resolve) => (release = resolve));
    let firstClaim: Claim | undefined;
    const first = knex.transaction(async (trx) => {
      firstClaim = await claimAs(trx, { batch: 10, dispatcherId: 'd1' });
      await held;
    });
    await eventually(() => firstClaim !== undefined);
    const second = claimAs(knex, { batch: 10, dispatcherId: 'd2' });
    await waitForLockWaiter(knex);
    release();
    await first;
    const secondClaim = await second;

    expect(firstClaim!.leased).toHaveLength(1);
    expect(firstClaim!.openTargets).toEqual([]); // the trial is a real delivery
    expect(secondClaim.leased).toEqual([]);
    const target = await targetRow(reg.targetId);
    expect(target).toMatchObject({ breaker_state: 'half-open' });
    expect(target.trial_until.getTime()).toBeGreaterThan(Date.now() + 50_000);

    // half-open with the trial in flight: nothing, and no circuit-open either
    const third = await claimAs(knex, { batch: 10, dispatcherId: 'd3' });
    expect(third.leased).toEqual([]);
    // it says to look again when the trial's lease runs out, at the latest
    expect(third.nextDueAt!.getTime()).toBe(target.trial_until.getTime());

    // the trial succeeds: closed, and the rest goes
    await completeWebhooks(knex, { dispatcherId: 'd1', leaseMs: 60_000, policy: TEST_HEALTH_POLICY }, [
      attemptResult(firstClaim!.leased[0]!),
    ]);
    expect(await targetRow(reg.targetId)).toMatchObject({ breaker_state: 'closed', opens: 0 });
    expect(await claimAs(knex, { batch: 10 })).toMatchObject({ leased: [{}, {}] });
  });

  it('answers when the earliest future webhook of an eligible registration falls due, ignoring a paused one', async () => {
    const active = await ownRegistration(knex, 'http://127.0.0.1:9/a');
    const paused = await ownRegistration(knex, 'http://127.0.0.2:9/b');
    await dueIn(await backlog(knex, active, 1), 60);
    await dueIn(await backlog(knex, paused, 1), 10);
    await knex.transaction((trx) => pauseRegistration(trx, paused.id, new Date()));
    const before = Date.now();
    const claim = await claimAs(knex, { batch: 10 });
    expect(claim.leased).toEqual([]);
    const inMs = claim.nextDueAt!.getTime() - before;
    expect(inMs).toBeGreaterThan(50_000);
    expect(inMs).toBeLessThanOrEqual(60_000);
  });

  it('takes only the head of a group', async () => {
    const grouped = await ownRegistration(knex, 'http://127.0.0.1:9/a', { shouldGroup: true });
    const ids = await backlog(knex, grouped, 3, 7); // three changes of entity 7: one group
    const claim = await claimAs(knex, { batch: 10 });
    expect(claim.leased.map((w) => w.id)).toEqual([ids[0]]);
  });
});

describe('the round-robin cursor', () => {
  /** `count` registrations (each its own endpoint, on one host) with `rows` due webhooks each. */
  async function endpoints(count: number, rows: number) {
    const regs = [];
    for (let i = 0; i < count; i++) {
      const reg = await ownRegistration(knex, `http://127.0.0.1:9/e${i}`);
      await backlog(knex, reg, rows);
      regs.push(reg);
    }
    return regs;
  }

  it('serves every endpoint with due work in turn across claims, a batch of registrations each', async () => {
    const regs = await endpoints(10, 5);
    const served: number[][] = [];
    let after = 0;
    for (let i = 0; i < 5; i++) {
      const claim = await claimAs(knex, { batch: 3, after });
      served.push(claim.leased.map((w) => w.registration_id).sort((x, y) => x - y));
      // it stopped at a batch of registrations, before a whole lap: claim again at once
      expect(claim.more).toBe(true);
      expect(claim.nextDueAt).toBeNull();
      after = claim.cursor;
    }
    const ids = regs.map((r) => r.id);
    // one row of three registrations per claim, in id order, wrapping after the last
    const expected = [...ids, ...ids].slice(0, 15);
    expect(served).toEqual(
      [0, 1, 2, 3, 4].map((i) => expected.slice(3 * i, 3 * i + 3).sort((x, y) => x - y)),
    );
  });

  it('visits a bounded number of registrations per claim, so paused ones ahead cannot stall it', async () => {
    const paused = await endpoints(20, 1);
    for (const reg of paused) await knex.transaction((trx) => pauseRegistration(trx, reg.id, new Date()));
    const [active] = await endpoints(1, 1);
    // batch 1: at most 8 visits a claim; the active one (the 21st) is reached on the third
    let after = 0;
    const claims: Claim[] = [];
    for (let i = 0; i < 3; i++) {
      const claim = await claimAs(knex, { batch: 1, after });
      claims.push(claim);
      after = claim.cursor;
    }
    expect(claims.slice(0, 2).map((c) => [c.leased.length, c.more, c.nextDueAt])).toEqual(
      Array(2).fill([0, true, null]),
    );
    expect(claims[2]!.leased.map((w) => w.registration_id)).toEqual([active!.id]);
    expect(claims[2]!.cursor).toBe(active!.id);
  });

  it('answers the next due time only after a whole lap, wrapping around from its cursor', async () => {
    const regs = await endpoints(3, 1);
    await dueIn(
      (await knex('webhooks')
        .whereIn(
          'registration_id',
          regs.map((r) => r.id),
        )
        .pluck('id')) as number[],
      60,
    );
    // starting after the second: the third, then the first and the second
    const claim = await claimAs(knex, { batch: 10, after: regs[1]!.id });
    expect(claim.leased).toEqual([]);
    expect(claim.more).toBe(false);
    expect(claim.wrapped).toBe(true);
    expect(claim.cursor).toBe(regs[1]!.id);
    expect(claim.nextDueAt!.getTime()).toBeGreaterThan(Date.now() + 50_000);
  });

  it('does not count an endpoint the dispatcher has no room for towards the batch’s registrations', async () => {
    const [full, other] = await endpoints(2, 2);
    const claim = await claimAs(knex, { batch: 1, rooms: [[full!.targetId, 0]] });
    expect(claim.leased.map((w) => w.registration_id)).toEqual([other!.id]);
  });
});

describe('the attempt stats', () => {
  it('sum to the attempts stored, with a latency bucket only for requests that were sent', async () => {
    const reg = await ownRegistration(knex, 'http://127.0.0.1:9/a');
    await backlog(knex, reg, 6);
    const claimed = (await claimAs(knex, { batch: 10 })).leased.sort((x, y) => x.id - y.id);
    const failed = { state: Retrying, retryDelayMs: 60_000, releasesGroup: false, responseBody: null };
    const results = [
      attemptResult(claimed[0]!, { durationMs: 12 }),
      attemptResult(claimed[1]!, { durationMs: 12 }),
      attemptResult(claimed[2]!, { ...failed, durationMs: 30, statusCode: 500, errorKind: 'status' }),
      attemptResult(claimed[3]!, { ...failed, durationMs: 1000, statusCode: null, errorKind: 'timeout' }),
      attemptResult(claimed[4]!, { ...failed, durationMs: 0, statusCode: null, errorKind: 'circuit-open' }),
      attemptResult(claimed[5]!, {
        ...failed,
        state: Failed,
        durationMs: 0,
        statusCode: null,
        errorKind: 'interrupted',
      }),
    ];
    await completeWebhooks(
      knex,
      { dispatcherId: 'd1', leaseMs: 60_000, policy: TEST_HEALTH_POLICY },
      results,
    );

    const stored = await knex('webhook_attempts').select(
      knex.raw('count(*)::int as attempts'),
      knex.raw('(count(*) filter (where error_kind is null))::int as successes'),
    );
    const stats = await knex('webhook_attempt_stats')
      .where({ registration_id: reg.id })
      .orderBy('bucket')
      .select('bucket', 'attempts', 'successes');
    const sum = (key: 'attempts' | 'successes') => stats.reduce((total, row) => total + row[key], 0);
    expect({ attempts: sum('attempts'), successes: sum('successes') }).toEqual(stored[0]);
    const bucket = (ms: number) => Math.floor(Math.log(ms + 1) / Math.log(1.1));
    expect(stats).toEqual([
      { bucket: -1, attempts: 2, successes: 0 }, // circuit-open, interrupted: no request
      { bucket: bucket(12), attempts: 2, successes: 2 },
      { bucket: bucket(30), attempts: 1, successes: 0 },
      { bucket: bucket(1000), attempts: 1, successes: 0 },
    ]);
  });
});
