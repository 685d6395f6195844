import { claimWebhooks, type ClaimedWebhook, type Knex } from '@platform/db';
import { WebhookState } from '@platform/shared';
import {
  attemptResult,
  createTestDatabase,
  propertyChange,
  seedChange,
  seedParty,
  seedRegistration,
  TEST_HEALTH_POLICY,
  truncateWebhooks,
  type TestDatabase,
} from '@platform/testkit';
import pino from 'pino';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import type { Clock } from './clock';
import { ResultFlusher, type FlushReport } from './flusher';

// The result flusher against a real Postgres: results nothing waits for linger to share one
// completion statement, a grouped webhook's result (its flush leases the group's next one) and
// an explicit flush (the shutdown's) are written at once with everything waiting.

let db: TestDatabase;
let knex: Knex;

/** Wall time and timers that fire only when the test fires them, moving its time on to theirs. */
function heldClock() {
  const timers: { callback: () => void; ms: number }[] = [];
  let skew = 0;
  const clock: Clock = {
    now: () => Date.now() + skew,
    setTimeout: (callback, ms) => {
      const timer = { callback, ms };
      timers.push(timer);
      return timer;
    },
    clearTimeout: (handle) => {
      const at = timers.indexOf(handle as (typeof timers)[number]);
      if (at >= 0) timers.splice(at, 1);
    },
  };
  /** Fires the oldest timer, its wait passed. */
  const fire = () => {
    const timer = timers.shift()!;
    skew += timer.ms;
    timer.callback();
  };
  return { clock, timers, fire };
}

function flusherWith(clock: Clock, lingerMs: number) {
  const reports: FlushReport[] = [];
  let onReport: (() => void) | undefined;
  const flusher = new ResultFlusher(
    {
      knex,
      logger: pino({ level: 'silent' }),
      dispatcherId: 'd1',
      leaseMs: 60_000,
      policy: TEST_HEALTH_POLICY,
      clock,
      lingerMs,
    },
    (report) => {
      reports.push(report);
      onReport?.();
    },
  );
  /** Answers once `count` batches in all have been written. */
  const written = (count: number) =>
    new Promise<void>((resolve) => {
      onReport = () => reports.length >= count && resolve();
      onReport();
    });
  return { flusher, reports, written };
}

/** `count` webhooks of a registration of its own (grouped: one group), claimed by d1. */
async function claimed(count: number, shouldGroup = false): Promise<ClaimedWebhook[]> {
  const partyId = await seedParty(knex);
  const registration = await seedRegistration(knex, {
    partyId,
    targetUrl: 'http://127.0.0.1:9/hook',
    shouldGroup,
  });
  for (let i = 1; i <= count; i++) await seedChange(knex, propertyChange(partyId, shouldGroup ? 1 : i));
  const claim = await claimWebhooks(knex, {
    batch: count,
    leaseMs: 60_000,
    dispatcherId: 'd1',
    rooms: new Map(),
    defaultRoom: count,
  });
  return claim.leased.filter((webhook) => webhook.registration_id === registration.id);
}

const success = (webhook: ClaimedWebhook) => attemptResult(webhook);

const states = async (webhooks: ClaimedWebhook[]) =>
  (await knex('webhooks')
    .whereIn(
      'id',
      webhooks.map((webhook) => webhook.id),
    )
    .orderBy('id')
    .pluck('state')) as number[];

/** A round trip to the database: long enough for a flush started now to have sent its statement. */
const settle = async () => {
  for (let i = 0; i < 3; i++) await knex.raw('select 1');
};

beforeAll(async () => {
  db = await createTestDatabase();
  knex = db.knex;
});
afterAll(() => db.drop());
beforeEach(() => truncateWebhooks(knex));

describe('the result flusher', () => {
  it('keeps the results nothing waits for until the linger is out, then writes them in one statement', async () => {
    const webhooks = await claimed(3);
    const { clock, timers, fire } = heldClock();
    const { flusher, reports, written } = flusherWith(clock, 50);
    for (const webhook of webhooks) flusher.add(success(webhook));
    await settle();
    // one timer for the oldest result's linger, nothing written yet
    expect(timers.map((timer) => timer.ms)).toEqual([expect.any(Number)]);
    expect(timers[0]!.ms).toBeLessThanOrEqual(50);
    expect(reports).toHaveLength(0);
    expect(await states(webhooks)).toEqual([
      WebhookState.Created,
      WebhookState.Created,
      WebhookState.Created,
    ]);

    fire();
    await written(1);
    expect(reports).toHaveLength(1);
    expect(await states(webhooks)).toEqual([
      WebhookState.Successful,
      WebhookState.Successful,
      WebhookState.Successful,
    ]);
  });

  it('writes each result at once without a linger', async () => {
    const webhooks = await claimed(2);
    const { clock, timers } = heldClock();
    const { flusher, written } = flusherWith(clock, 0);
    flusher.add(success(webhooks[0]!));
    await written(1);
    flusher.add(success(webhooks[1]!));
    await written(2);
    expect(timers).toHaveLength(0);
    expect(await states(webhooks)).toEqual([WebhookState.Successful, WebhookState.Successful]);
  });

  it("writes a grouped webhook's result at once, with what lingers, and leases the group's next webhook", async () => {
    const [loose] = await claimed(1);
    const [head] = await claimed(3, true);
    const { clock, timers } = heldClock();
    const { flusher, reports, written } = flusherWith(clock, 60_000);
    flusher.add(success(loose!));
    await settle();
    expect(reports).toHaveLength(0);

    flusher.add(success(head!));
    await written(1);
    expect(reports[0]!.leased.map((webhook) => webhook.group_key)).toEqual([head!.group_key]);
    expect(await states([loose!, head!])).toEqual([WebhookState.Successful, WebhookState.Successful]);
    // the linger's timer went with the statement that wrote its result
    expect(timers).toHaveLength(0);
  });

  it('writes a result that holds its endpoint at once, so the hold is in the database for every replica', async () => {
    const [webhook] = await claimed(1);
    const { clock, timers } = heldClock();
    const { flusher, reports, written } = flusherWith(clock, 60_000);
    // a 429 with Retry-After: retried after the hold, the endpoint held as long
    flusher.add(
      attemptResult(webhook!, {
        statusCode: 429,
        errorKind: 'status',
        state: WebhookState.Retrying,
        retryDelayMs: 30_000,
        holdMs: 30_000,
      }),
    );
    await written(1);
    expect(reports[0]!.held).toEqual([webhook!.target_id]);
    const target = await knex('webhook_targets').where({ id: webhook!.target_id }).first('hold_until');
    expect(target?.hold_until).toBeTruthy();
    expect(timers).toHaveLength(0);
  });

  it('writes everything waiting when told to flush (the shutdown), whatever the linger', async () => {
    const webhooks = await claimed(2);
    const { clock } = heldClock();
    const { flusher, reports } = flusherWith(clock, 60_000);
    for (const webhook of webhooks) flusher.add(success(webhook));
    await flusher.flush();
    expect(reports).toHaveLength(1);
    expect(await states(webhooks)).toEqual([WebhookState.Successful, WebhookState.Successful]);
  });
});
