import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { WebhookState } from '@platform/shared';
import { createTestDatabase, truncateWebhooks, type TestDatabase } from '@platform/testkit';
import type { Knex } from 'knex';
import { completeWebhooks } from './complete';
import { stoppedDeliveries } from './stopped-deliveries';
import {
  attemptResult,
  backlog,
  claimAs,
  ownRegistration,
  setBreaker,
  TEST_HEALTH_POLICY,
} from '../../tests/queue';

// What a receiver asks of its endpoint, at the claim (webhooks_claim) against a real Postgres: a
// Retry-After hold gives the endpoint no room until it ends, and a rate limit's token bucket,
// kept on the endpoint row, bounds what every replica's claims take together.

const { Retrying } = WebhookState;

let db: TestDatabase;
let knex: Knex;

const targetRow = (id: number) => knex('webhook_targets').where({ id }).first();
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

beforeAll(async () => {
  db = await createTestDatabase();
  knex = db.knex;
});
afterAll(() => db.drop());
beforeEach(() => truncateWebhooks(knex));

describe('a Retry-After hold', () => {
  it('gives the held endpoint no room, trial or circuit-open attempt until it ends, and leaves another endpoint of the host alone', async () => {
    const a = await ownRegistration(knex, 'http://127.0.0.1:9/a');
    const b = await ownRegistration(knex, 'http://127.0.0.1:9/b');
    const aIds = await backlog(knex, a, 5);
    const bIds = await backlog(knex, b, 3);

    // a's oldest is answered 429 with Retry-After: 5 (as the dispatcher clamps it)
    const first = (await claimAs(knex, { batch: 1, rooms: [[b.targetId, 0]] })).leased;
    expect(first.map((w) => w.id)).toEqual([aIds[0]]);
    await completeWebhooks(knex, { dispatcherId: 'd1', leaseMs: 60_000, policy: TEST_HEALTH_POLICY }, [
      attemptResult(first[0]!, {
        statusCode: 429,
        errorKind: 'status',
        state: Retrying,
        retryDelayMs: 5_000,
        holdMs: 5_000,
        releasesGroup: false,
      }),
    ]);
    const { hold_until: holdUntil } = await targetRow(a.targetId);
    const heldFor = new Date(holdUntil as Date).getTime() - Date.now();
    expect(heldFor).toBeGreaterThan(4_000);
    expect(heldFor).toBeLessThanOrEqual(5_000);

    // the held endpoint gets nothing, the other endpoint of the host everything; the claim
    // wakes the loop when the hold ends, and does not call the held endpoint capped
    const claim = await claimAs(knex, { batch: 10 });
    expect(claim.leased.map((w) => w.id).sort((x, y) => x - y)).toEqual(bIds);
    expect(claim.cappedTargets).not.toContain(a.targetId);
    expect(new Date(claim.nextDueAt!).getTime()).toBe(new Date(holdUntil as Date).getTime());
    // no attempt spent on a's waiting webhooks
    const waiting = await knex('webhooks').whereIn('id', aIds.slice(1)).select('attempt_count', 'locked_by');
    expect(waiting).toEqual(aIds.slice(1).map(() => ({ attempt_count: 0, locked_by: null })));
    // the dispatchers' check finds it held
    const stopped = await stoppedDeliveries(knex, [a.id, b.id], [a.targetId, b.targetId]);
    expect(stopped.registrations).toEqual([]);
    expect(stopped.held.map((h) => h.id)).toEqual([a.targetId]);
    expect(stopped.held[0]!.heldForMs).toBeGreaterThan(3_000);

    // an open breaker whose cool-down is over sends no trial and records no circuit-open while held
    await setBreaker(knex, a.targetId, 'open', { openForSeconds: -1 });
    expect((await claimAs(knex, { batch: 10 })).leased).toEqual([]);
    expect((await targetRow(a.targetId)).breaker_state).toBe('open');
    await setBreaker(knex, a.targetId, 'closed');

    // the hold over: a's waiting webhooks go, oldest first
    await knex('webhook_targets')
      .where({ id: a.targetId })
      .update({ hold_until: knex.raw(`now() - interval '1 second'`) });
    const after = await claimAs(knex, { batch: 10 });
    expect(after.leased.map((w) => w.id)).toEqual(aIds.slice(1));
    expect(after.leased.map((w) => w.attempt)).toEqual(aIds.slice(1).map(() => 1));
  });
});

describe('a rate limit', () => {
  it('lets the claims of two replicas together take at most the rate, from a bucket of a quarter second', async () => {
    const reg = await ownRegistration(knex, 'http://127.0.0.1:9/limited');
    await knex('webhook_registrations').where({ id: reg.id }).update({ rate_limit: 8 });
    expect((await targetRow(reg.targetId)).rate_limit).toBe(8);
    await backlog(knex, reg, 60);

    // a full bucket holds 2 (8 / 4); then it is empty, and the claim says when the next token comes
    const first = await claimAs(knex, { batch: 10 });
    expect(first.leased).toHaveLength(2);
    expect(first.cappedTargets).toEqual([]);
    const wait = new Date(first.nextDueAt!).getTime() - Date.now();
    expect(wait).toBeGreaterThan(0);
    expect(wait).toBeLessThanOrEqual(125);

    // two replicas claiming as fast as they can for 2 s take what 8 a second allows, no more
    const started = Date.now();
    let taken = 0;
    const replica = async (dispatcherId: string) => {
      while (Date.now() - started < 2_000) {
        const { leased } = await claimAs(knex, { batch: 10, dispatcherId });
        taken += leased.length;
        await sleep(5);
      }
    };
    await Promise.all([replica('d1'), replica('d2')]);
    const elapsed = (Date.now() - started) / 1000;
    expect(taken).toBeLessThanOrEqual(Math.ceil(8 * elapsed) + 1);
    expect(taken).toBeGreaterThanOrEqual(Math.floor(8 * elapsed) - 2);
    const owners = await knex('webhooks')
      .where({ registration_id: reg.id })
      .whereNotNull('locked_by')
      .distinct('locked_by')
      .pluck('locked_by');
    expect(owners.sort()).toEqual(['d1', 'd2']);
  });

  it('does not hold an endpoint without a limit, and a cleared limit stops holding it', async () => {
    const reg = await ownRegistration(knex, 'http://127.0.0.1:9/free');
    await backlog(knex, reg, 20);
    await knex('webhook_registrations').where({ id: reg.id }).update({ rate_limit: 4 });
    expect((await claimAs(knex, { batch: 10 })).leased).toHaveLength(1);
    await knex('webhook_registrations').where({ id: reg.id }).update({ rate_limit: null });
    expect((await targetRow(reg.targetId)).rate_limit).toBeNull();
    expect((await claimAs(knex, { batch: 10 })).leased).toHaveLength(10);
  });
});
