import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { WebhookState } from '@platform/shared';
import { createTestDatabase, truncateWebhooks, type TestDatabase } from '@platform/testkit';
import type { Knex } from 'knex';
import type { ClaimedWebhook } from './claim';
import { completeWebhooks, type AttemptResult } from './complete';
import { pauseRegistration } from './registration-status';
import {
  attemptResult,
  backlog,
  claimAs,
  listenForWakeUps,
  ownRegistration,
  setBreaker,
  TEST_HEALTH_POLICY,
} from '../../tests/queue';

// What recording results (`webhooks_complete`) does to a target's breaker, a registration's
// failing run and a released group, against a real Postgres. TEST_HEALTH_POLICY: the breaker opens
// after 3 target failures, cools down for 60 s (doubling, at most 600 s); a registration is
// disabled after 5 days of failures with at least 10 attempts.

const { Created, Retrying, Failed, Successful } = WebhookState;

let db: TestDatabase;
let knex: Knex;

const recorder = { dispatcherId: 'd1', leaseMs: 60_000, policy: TEST_HEALTH_POLICY };
const record = (results: AttemptResult[]) => completeWebhooks(knex, recorder, results);
const targetRow = (id: number) => knex('webhook_targets').where({ id }).first();
const registrationRow = (id: number) => knex('webhook_registrations').where({ id }).first();

/** A failed result: `status` a status code (an answer), or an error kind without one. */
function failure(
  webhook: ClaimedWebhook,
  what: number | string,
  state: typeof Retrying | typeof Failed = Retrying,
): AttemptResult {
  const status = typeof what === 'number';
  return attemptResult(webhook, {
    state,
    retryDelayMs: state === Retrying ? 60_000 : null,
    releasesGroup: state === Failed && webhook.should_group_continue_after_fail,
    statusCode: status ? what : null,
    errorKind: status ? (what >= 300 && what < 400 ? 'redirect' : 'status') : what,
    responseBody: null,
  });
}

/** Seconds from now to `date`. */
const secondsUntil = (date: Date) => (date.getTime() - Date.now()) / 1000;

/** A target with `count` due webhooks, all claimed; answers the registration, target and claimed webhooks. */
async function claimed(count: number, url = 'http://127.0.0.1:9/hook') {
  const registration = await ownRegistration(knex, url);
  await backlog(knex, registration, count);
  const { leased } = await claimAs(knex, { batch: count });
  return { registration, targetId: registration.targetId, webhooks: leased.sort((a, b) => a.id - b.id) };
}

/** After the cool-down, the one trial of an open target: claimed and answered `answer`. */
async function trial(registration: { id: number; partyId: number; targetId: number }) {
  await setBreaker(knex, registration.targetId, 'open', { openForSeconds: -1 });
  const { leased } = await claimAs(knex, { batch: 10 });
  expect(leased).toHaveLength(1);
  return leased[0]!;
}

beforeAll(async () => {
  db = await createTestDatabase();
  knex = db.knex;
});
afterAll(() => db.drop());
beforeEach(() => truncateWebhooks(knex));

describe('the breaker', () => {
  it('opens after 3 target failures in a row; an answer that is not a 5xx ends the run', async () => {
    const { registration, targetId, webhooks: w } = await claimed(7);
    // a 5xx, a timeout, then a 404 (the target answered): the run starts again
    await record([failure(w[0]!, 500), failure(w[1]!, 'timeout'), failure(w[2]!, 404)]);
    expect(await targetRow(targetId)).toMatchObject({ breaker_state: 'closed', consecutive_failures: 0 });
    // a redirect is an answer too
    await record([failure(w[3]!, 503), failure(w[4]!, 302), failure(w[5]!, 'connection-refused')]);
    expect(await targetRow(targetId)).toMatchObject({ breaker_state: 'closed', consecutive_failures: 1 });
    // results that asked the target nothing leave the run as it is
    await record([failure(w[6]!, 'internal')]);
    expect(await targetRow(targetId)).toMatchObject({ consecutive_failures: 1 });

    // another party's registration of the same URL is an endpoint of its own: its failures are
    // not this one's
    const { targetId: otherTargetId, webhooks: others } = await claimed(2);
    expect(otherTargetId).not.toBe(targetId);
    await record(others.map((webhook) => failure(webhook, 500)));
    expect(await targetRow(targetId)).toMatchObject({ breaker_state: 'closed', consecutive_failures: 1 });
    expect(await targetRow(otherTargetId)).toMatchObject({ consecutive_failures: 2 });

    await backlog(knex, registration, 2);
    const { leased: more } = await claimAs(knex, { batch: 2 });
    await record([failure(more[0]!, 'connection-reset'), failure(more[1]!, 500)]);
    const open = await targetRow(targetId);
    expect(open).toMatchObject({ breaker_state: 'open', consecutive_failures: 3, opens: 1 });
    expect(secondsUntil(open.open_until)).toBeGreaterThan(55);
    expect(secondsUntil(open.open_until)).toBeLessThanOrEqual(60);
  });

  it('counts the failures of one batch after its last success', async () => {
    const { targetId, webhooks: w } = await claimed(5);
    await record([
      failure(w[0]!, 500),
      failure(w[1]!, 500),
      attemptResult(w[2]!),
      failure(w[3]!, 500),
      failure(w[4]!, 500),
    ]);
    expect(await targetRow(targetId)).toMatchObject({ breaker_state: 'closed', consecutive_failures: 2 });
  });

  it('re-opens after a failed trial with twice the cool-down, up to the longest', async () => {
    const registration = await ownRegistration(knex, 'http://127.0.0.1:9/hook');
    await backlog(knex, registration, 3);
    await setBreaker(knex, registration.targetId, 'open', { openForSeconds: -1, opens: 1 });
    const first = (await claimAs(knex, { batch: 10 })).leased;
    expect(first).toHaveLength(1);
    await record([failure(first[0]!, 'timeout')]);
    const reopened = await targetRow(registration.targetId);
    expect(reopened).toMatchObject({ breaker_state: 'open', opens: 2 });
    expect(secondsUntil(reopened.open_until)).toBeGreaterThan(115);
    expect(secondsUntil(reopened.open_until)).toBeLessThanOrEqual(120);

    await setBreaker(knex, registration.targetId, 'open', { openForSeconds: -1, opens: 9 });
    const second = (await claimAs(knex, { batch: 10 })).leased;
    await record([failure(second[0]!, 500)]);
    expect(secondsUntil((await targetRow(registration.targetId)).open_until)).toBeLessThanOrEqual(600);
    expect(secondsUntil((await targetRow(registration.targetId)).open_until)).toBeGreaterThan(595);
  });

  it('closes on a trial that succeeds, forgetting the opens', async () => {
    const registration = await ownRegistration(knex, 'http://127.0.0.1:9/hook');
    await backlog(knex, registration, 2);
    await setBreaker(knex, registration.targetId, 'open', { openForSeconds: -1, opens: 3 });
    const [webhook] = (await claimAs(knex, { batch: 10 })).leased;
    await record([attemptResult(webhook!)]);
    expect(await targetRow(registration.targetId)).toMatchObject({
      breaker_state: 'closed',
      opens: 0,
      consecutive_failures: 0,
      open_until: null,
      trial_until: null,
    });
  });

  it('closes on a trial answered with a 4xx: the target is up', async () => {
    const registration = await ownRegistration(knex, 'http://127.0.0.1:9/hook');
    await backlog(knex, registration, 2);
    await record([failure(await trial(registration), 422)]);
    expect(await targetRow(registration.targetId)).toMatchObject({ breaker_state: 'closed' });
    expect((await claimAs(knex, { batch: 10 })).leased).toHaveLength(1);
  });

  it('lets the next trial go at once when one ended without asking the target', async () => {
    const registration = await ownRegistration(knex, 'http://127.0.0.1:9/hook');
    await backlog(knex, registration, 2);
    await record([failure(await trial(registration), 'internal')]);
    expect(await targetRow(registration.targetId)).toMatchObject({
      breaker_state: 'half-open',
      trial_until: null,
    });
    // the next claim sends the next trial, without waiting for the first one's lease
    expect((await claimAs(knex, { batch: 10 })).leased).toHaveLength(1);
  });

  it('wakes the dispatchers (NOTIFY) when a trial closes it, so the rest goes without waiting for a poll', async () => {
    const registration = await ownRegistration(knex, 'http://127.0.0.1:9/hook');
    await backlog(knex, registration, 2);
    const webhook = await trial(registration);
    const wakeUps = await listenForWakeUps(knex);
    try {
      await record([attemptResult(webhook)]);
      expect(await wakeUps.settle()).toEqual(['']);
    } finally {
      await wakeUps.close();
    }
  });
});

describe("a released group's next webhook", () => {
  it('is leased to the recorder only when a claim could take it: not while its registration is paused', async () => {
    const registration = await ownRegistration(knex, 'http://127.0.0.1:9/hook', { shouldGroup: true });
    const [, next] = await backlog(knex, registration, 2, 7);
    const [head] = (await claimAs(knex, { batch: 10 })).leased;
    await knex.transaction((trx) => pauseRegistration(trx, registration.id, new Date()));
    const { leased } = await record([attemptResult(head!)]);
    expect(leased).toEqual([]);
    expect(await knex('webhooks').where({ id: next }).first('state', 'locked_by', 'attempt_count')).toEqual({
      state: Created,
      locked_by: null,
      attempt_count: 0,
    });
    expect((await claimAs(knex, { batch: 10 })).leased).toEqual([]);
  });

  it("is not leased while its target's breaker is open: the claim records it circuit-open", async () => {
    const registration = await ownRegistration(knex, 'http://127.0.0.1:9/hook', {
      shouldGroup: true,
      shouldGroupContinueAfterFail: true,
    });
    const [, next] = await backlog(knex, registration, 2, 7);
    const [head] = (await claimAs(knex, { batch: 10 })).leased;
    await setBreaker(knex, registration.targetId, 'open', { openForSeconds: 60 });
    // the head's last try found the breaker open: Failed, which releases the group
    const { leased } = await record([failure(head!, 'circuit-open', Failed)]);
    expect(leased).toEqual([]);
    expect(await knex('webhooks').where({ id: next }).first('state', 'locked_by')).toEqual({
      state: Created,
      locked_by: null,
    });
    const claim = await claimAs(knex, { batch: 10 });
    expect(claim.leased.map((w) => w.id)).toEqual([next]);
    expect(claim.openTargets).toEqual([registration.targetId]);
  });

  it('is leased to the recorder when its registration is active and its target closed', async () => {
    const registration = await ownRegistration(knex, 'http://127.0.0.1:9/hook', { shouldGroup: true });
    const [, next] = await backlog(knex, registration, 2, 7);
    const [head] = (await claimAs(knex, { batch: 10 })).leased;
    const { leased } = await record([attemptResult(head!)]);
    expect(leased.map((w) => [w.id, w.attempt])).toEqual([[next, 1]]);
    expect(await knex('webhooks').where({ id: head!.id }).first('state')).toEqual({ state: Successful });
  });
});

describe("a registration's failing run", () => {
  it('disables it (failing) once every attempt failed long enough, with enough attempts; a success starts it again', async () => {
    const { registration, webhooks: w } = await claimed(12);
    // 9 failures, the first 6 days ago: long enough, but not enough attempts
    await record(w.slice(0, 9).map((webhook) => failure(webhook, 404)));
    expect(await registrationRow(registration.id)).toMatchObject({
      status: 'active',
      failures_since_success: 9,
    });
    await knex('webhook_registrations')
      .where({ id: registration.id })
      .update({ failing_since: knex.raw(`now() - interval '6 days'`) });
    // a success: the run is over
    await record([attemptResult(w[9]!)]);
    expect(await registrationRow(registration.id)).toMatchObject({
      status: 'active',
      failures_since_success: 0,
      failing_since: null,
    });

    await record([failure(w[10]!, 500)]);
    const row = await registrationRow(registration.id);
    expect(row).toMatchObject({ status: 'active', failures_since_success: 1 });
    expect(Math.abs(row.failing_since.getTime() - Date.now())).toBeLessThan(5_000);
    await knex('webhook_registrations')
      .where({ id: registration.id })
      .update({ failing_since: knex.raw(`now() - interval '6 days'`), failures_since_success: 9 });
    const { disabled } = await record([failure(w[11]!, 'circuit-open')]);
    expect(disabled).toEqual([{ registrationId: registration.id, reason: 'failing' }]);
    expect(await registrationRow(registration.id)).toMatchObject({
      status: 'disabled',
      disabled_reason: 'failing',
      failures_since_success: 10,
    });
    // its webhooks are kept: none Failed
    expect(
      await knex('webhooks')
        .where({ registration_id: registration.id })
        .groupBy('state')
        .orderBy('state')
        .select('state', knex.raw('count(*)::int as n')),
    ).toEqual([
      { state: Retrying, n: 11 },
      { state: Successful, n: 1 },
    ]);
  });

  it('disables it (gone) on a 410 after its last success, and only once', async () => {
    const { registration, webhooks: w } = await claimed(5);
    // a 410 and then a success in one batch: the target is back
    await record([failure(w[0]!, 410), attemptResult(w[1]!)]);
    expect(await registrationRow(registration.id)).toMatchObject({ status: 'active' });
    const { disabled } = await record([attemptResult(w[2]!), failure(w[3]!, 410)]);
    expect(disabled).toEqual([{ registrationId: registration.id, reason: 'gone' }]);
    expect(await registrationRow(registration.id)).toMatchObject({
      status: 'disabled',
      disabled_reason: 'gone',
    });
    // a result of a delivery still in flight then changes nothing
    expect((await record([failure(w[4]!, 410)])).disabled).toEqual([]);
    expect(await knex('mail_outbox').count({ n: '*' })).toEqual([{ n: 0 }]); // a party without accounts
  });
});
