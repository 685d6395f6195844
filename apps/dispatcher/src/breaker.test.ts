import { WebhookState } from '@platform/shared';
import {
  attemptsOf,
  type DispatcherProcess,
  eventually,
  propertyChange,
  type ReceivedRequest,
  seedChange,
  seedParty,
  seedRegistration,
  type TestTarget,
  waitForWebhook,
} from '@platform/testkit';
import { useDispatchersPerTest } from '@platform/testkit/testbed';
import { describe, expect, it } from 'vitest';

// The circuit breaker of a target (docs/dispatcher.md › The breaker), with real dispatcher
// processes, a real Postgres holding the breaker, and real targets on 127.0.0.1. The breaker
// opens after 3 target failures; each test sets its cool-down and a retry schedule slow enough
// that the webhooks' seven attempts outlast what it watches.

const { Successful } = WebhookState;
/** Clock rounding between the target's Date.now() and Postgres' now(). */
const SLACK_MS = 5;

const testbed = useDispatchersPerTest();
const { db, target } = testbed;

/** A dispatcher whose breaker opens after 3 target failures and cools down for `cooldown` first. */
const dispatcher = (cooldown: string, schedule: string): Promise<DispatcherProcess> =>
  testbed.dispatcher({
    WEBHOOK_TIMEOUT: '1s',
    WEBHOOK_RETRY_SCHEDULE: schedule,
    DISPATCHER_BREAKER_FAILURES: '3',
    DISPATCHER_BREAKER_COOLDOWN: cooldown,
    DISPATCHER_POLL_INTERVAL: '60s',
  });

/** A party of its own with one registration at `url`; answers them and the registration's target. */
async function registered(url: string) {
  const partyId = await seedParty(db.knex);
  const { id } = await seedRegistration(db.knex, { partyId, targetUrl: url });
  const { target_id: targetId } = await db.knex('webhook_registrations').where({ id }).first('target_id');
  return { partyId, registrationId: id, targetId: targetId as number };
}

/** `count` changes of the party (entities `from`…), each one webhook; answers their ids. */
async function changes(partyId: number, count: number, from = 1): Promise<number[]> {
  const ids: number[] = [];
  for (let i = 0; i < count; i++) ids.push(...(await seedChange(db.knex, propertyChange(partyId, from + i))));
  return ids;
}

interface BreakerRow {
  breaker_state: 'closed' | 'open' | 'half-open';
  opens: number;
  consecutive_failures: number;
  open_until: Date | null;
  state_changed: Date;
}
const breakerOf = async (targetId: number): Promise<BreakerRow> =>
  (await db.knex('webhook_targets').where({ id: targetId }).first()) as BreakerRow;

/** Waits for the breaker to be open with `opens` opens; answers when it opened (Postgres' clock). */
async function opened(targetId: number, opens = 1): Promise<BreakerRow> {
  let row: BreakerRow | undefined;
  await eventually(
    async () => {
      row = await breakerOf(targetId);
      return row.breaker_state === 'open' && row.opens === opens;
    },
    { what: `the breaker open (${opens})` },
  );
  return row!;
}

/** The requests received in [from, to). */
const receivedBetween = (hook: TestTarget, from: number, to: number): ReceivedRequest[] =>
  hook.requests.filter((r) => r.receivedAt >= from && r.receivedAt < to);

describe('a target’s circuit breaker', () => {
  it('opens after 3 target failures, records circuit-open attempts without a request while open, then sends one trial that closes it', async () => {
    // a cool-down long enough that the webhooks written once it opened are surely claimed while
    // it is open, even on a busy machine
    await dispatcher('4s', '0ms,5s,5s,5s,5s,5s,5s');
    let mended = false;
    /** The breaker's state when each request after the mend arrived. */
    const stateAtMendedRequest: string[] = [];
    const hook = await target(async (request) => {
      if (!mended) return request.index === 2 ? { hang: true } : { status: 503 }; // a timeout and two 5xx
      stateAtMendedRequest.push((await breakerOf(targetId)).breaker_state);
      return { status: 200, delayMs: 300 };
    });
    const { partyId, targetId } = await registered(hook.url);

    const failing = await changes(partyId, 3);
    const open = await opened(targetId);
    expect(open.consecutive_failures).toBe(3);
    expect(open.open_until!.getTime() - open.state_changed.getTime()).toBe(4000);
    expect(hook.requests).toHaveLength(3);
    // while open: attempts recorded as circuit-open, nothing sent
    const whileOpen = await changes(partyId, 2, 10);
    for (const id of whileOpen) {
      await eventually(async () => (await attemptsOf(db.knex, id)).length === 1, {
        what: `webhook ${id} tried`,
      });
      expect(await attemptsOf(db.knex, id)).toMatchObject([
        { number: 1, status_code: null, error_kind: 'circuit-open', duration_ms: 0 },
      ]);
    }
    expect(hook.requests).toHaveLength(3);
    mended = true;

    // after the cool-down: one trial (half-open), answered before anything else is sent
    for (const id of [...failing, ...whileOpen]) await waitForWebhook(db.knex, id, Successful);
    const [trial, ...rest] = hook.requests.slice(3);
    expect(trial!.receivedAt).toBeGreaterThanOrEqual(open.open_until!.getTime() - SLACK_MS);
    expect(stateAtMendedRequest[0]).toBe('half-open');
    for (const request of rest) expect(request.receivedAt).toBeGreaterThanOrEqual(trial!.answeredAt!);
    // closed, and everything delivered once
    expect(await breakerOf(targetId)).toMatchObject({
      breaker_state: 'closed',
      opens: 0,
      consecutive_failures: 0,
    });
    expect(rest).toHaveLength(4);
    expect(new Set(hook.requests.slice(3).map((r) => r.webhookId)).size).toBe(5);
  });

  it('is not opened by 4xx answers: the target answered', async () => {
    await dispatcher('2s', '0ms,3s,3s,3s,3s,3s,3s');
    const hook = await target(() => ({ status: 404 }));
    const { partyId, targetId } = await registered(hook.url);
    const ids = await changes(partyId, 5);
    for (const id of ids) {
      await eventually(async () => (await attemptsOf(db.knex, id)).length === 1, {
        what: `webhook ${id} tried`,
      });
    }
    const more = await changes(partyId, 1, 10);
    await eventually(async () => (await attemptsOf(db.knex, more[0]!)).length === 1, {
      what: 'the sixth tried',
    });
    expect(hook.requests).toHaveLength(6);
    for (const id of [...ids, ...more]) {
      expect(await attemptsOf(db.knex, id)).toMatchObject([{ status_code: 404, error_kind: 'status' }]);
    }
    expect(await breakerOf(targetId)).toMatchObject({ breaker_state: 'closed', consecutive_failures: 0 });
  });

  it('re-opens after a failed trial with twice the cool-down', async () => {
    await dispatcher('1s', '0ms,1s,1s,1s,1s,1s,1s');
    const hook = await target(() => ({ status: 503 }));
    const { partyId, targetId } = await registered(hook.url);
    // the cool-downs as the breaker stored them, by its number of opens
    const cooldowns = new Map<number, number>();
    let watching = true;
    const watcher = (async () => {
      while (watching) {
        const row = await breakerOf(targetId);
        if (row.breaker_state === 'open') {
          cooldowns.set(row.opens, row.open_until!.getTime() - row.state_changed.getTime());
        }
        await new Promise((r) => setTimeout(r, 20));
      }
    })();
    await changes(partyId, 3);
    const first = await opened(targetId, 1);
    await changes(partyId, 2, 10); // more due work through the cool-downs
    const third = await opened(targetId, 3);
    watching = false;
    await watcher;
    for (const row of [first, third])
      cooldowns.set(row.opens, row.open_until!.getTime() - row.state_changed.getTime());

    // each open's cool-down twice the one before (an open shorter than a poll may go unseen)
    expect(cooldowns.get(1)).toBe(1000);
    expect(cooldowns.get(3)).toBe(4000);
    for (const [opens, ms] of cooldowns) expect(ms).toBe(1000 * 2 ** (opens - 1));
    // two trials between the first open and the third, each sent alone once its cool-down ended
    const trials = receivedBetween(hook, first.state_changed.getTime(), third.state_changed.getTime());
    expect(trials).toHaveLength(2);
    expect(trials[0]!.receivedAt).toBeGreaterThanOrEqual(first.open_until!.getTime() - SLACK_MS);
    expect(trials[1]!.receivedAt - trials[0]!.answeredAt!).toBeGreaterThanOrEqual(2000 - SLACK_MS);
  });

  it('is shared by two dispatcher replicas: while open neither sends, and one trial goes between them', async () => {
    await Promise.all([dispatcher('1s', '0ms,2s,2s,2s,2s,2s,2s'), dispatcher('1s', '0ms,2s,2s,2s,2s,2s,2s')]);
    let trials = 0;
    const hook = await target((request) => {
      if (request.index <= 3) return { status: 500 };
      // the first trial fails, the second succeeds; each takes a while, so a second one would show
      trials++;
      return { status: trials === 1 ? 503 : 200, delayMs: 300 };
    });
    const { partyId, targetId } = await registered(hook.url);
    const failing = await changes(partyId, 3);
    const first = await opened(targetId, 1);
    // plenty of due work for both replicas while it is open
    const whileOpen = await changes(partyId, 10, 10);
    for (const id of whileOpen) {
      await eventually(async () => (await attemptsOf(db.knex, id)).length >= 1, {
        what: `webhook ${id} tried`,
      });
    }
    const second = await opened(targetId, 2);
    for (const id of [...failing, ...whileOpen]) await waitForWebhook(db.knex, id, Successful);

    const [trial1, trial2, ...rest] = hook.requests.slice(3);
    // nothing while open: the first trial after the first cool-down, the second after the next
    expect(
      receivedBetween(hook, first.state_changed.getTime(), first.open_until!.getTime() - SLACK_MS),
    ).toEqual([]);
    expect(trial1!.receivedAt).toBeGreaterThanOrEqual(first.open_until!.getTime() - SLACK_MS);
    expect(trial2!.receivedAt).toBeGreaterThanOrEqual(second.open_until!.getTime() - SLACK_MS);
    expect(second.open_until!.getTime() - second.state_changed.getTime()).toBe(2000);
    // each trial alone: nothing else arrived before it was answered
    expect(trial2!.receivedAt).toBeGreaterThanOrEqual(trial1!.answeredAt!);
    for (const request of rest) expect(request.receivedAt).toBeGreaterThanOrEqual(trial2!.answeredAt!);
    // the webhooks written while open got circuit-open attempts, which sent nothing, then their
    // delivery
    let circuitOpen = 0;
    for (const id of whileOpen) {
      const attempts = await attemptsOf(db.knex, id);
      circuitOpen += attempts.filter((a) => a.error_kind === 'circuit-open').length;
      expect(attempts.at(-1)).toMatchObject({ status_code: 200, error_kind: null });
      expect(attempts.filter((a) => a.error_kind !== 'circuit-open').length).toBe(
        hook.requestsFor(id).length,
      );
    }
    expect(circuitOpen).toBeGreaterThanOrEqual(whileOpen.length);
    // the first trial's webhook went again later; every webhook was delivered once
    expect(hook.requests).toHaveLength(3 + 1 + 13);
  });
});
