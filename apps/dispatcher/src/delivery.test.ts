import { randomBytes } from 'node:crypto';
import { notifyWebhookDue } from '@platform/db';
import { createSecretBox } from '@platform/crypto';
import { WEBHOOK_USER_AGENT, WebhookState } from '@platform/shared';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createProperty } from '../../api/tests/support/webhooks';
import { buildAccount, buildParty, login, useTestApi } from '../../api/tests/support/api';
import {
  type AttemptRow,
  attemptsOf,
  bodyOf,
  type DispatcherProcess,
  eventually,
  propertyChange,
  refusingUrl,
  seedChange,
  seedRegistration,
  startDispatcher,
  startTestTarget,
  type TargetAnswer,
  type TestTarget,
  waitForLockWaiter,
  waitForWebhook,
  webhookRow,
} from '@platform/testkit';

const { Created, Retrying, Successful, Failed } = WebhookState;

// Delivery as the real dispatcher process does it, against real targets on 127.0.0.1, with the
// outcome read back from the tables it writes. The schedule is short and every step differs, so
// a wait taken from the wrong step shows; the poll is a minute, so anything that happens within
// the tests' 20-second limits was woken by a NOTIFY or by the dispatcher's own timer.

const SCHEDULE = [0, 600, 700, 800, 900, 1000, 1100];
const TIMEOUT_MS = 500;
/** Clock rounding: attempt times are whole milliseconds, durations rounded. */
const SLACK_MS = 5;

const { api } = useTestApi();
let dispatcher: DispatcherProcess;
const targets: TestTarget[] = [];

beforeAll(async () => {
  dispatcher = await startDispatcher(api.db.url, {
    WEBHOOK_RETRY_SCHEDULE: SCHEDULE.map((ms) => `${ms}ms`).join(','),
    WEBHOOK_TIMEOUT: `${TIMEOUT_MS}ms`,
    DISPATCHER_POLL_INTERVAL: '60s',
    // the retry schedule's target fails all seven attempts: at the default 5 the breaker would
    // record the last two as circuit-open, sending nothing (breaker.test.ts is about that)
    DISPATCHER_BREAKER_FAILURES: '8',
  });
});

afterAll(async () => {
  if (dispatcher) expect(await dispatcher.stop()).toBe(0);
  await Promise.all(targets.map((t) => t.close()));
});

/** A target of its own (closed after the file). */
async function target(script?: (n: number) => TargetAnswer): Promise<TestTarget> {
  const started = await startTestTarget(script ? (request) => script(request.index) : undefined);
  targets.push(started);
  return started;
}

/**
 * A Property Management Company of its own with one registration at `targetUrl`, so no other
 * test's changes fan out to it.
 */
async function registered(targetUrl: string): Promise<{ partyId: number; registrationId: number }> {
  const party = await buildParty(api.deps, { type: 2 });
  const registration = await seedRegistration(api.db.knex, { partyId: party.id, targetUrl });
  return { partyId: party.id, registrationId: registration.id };
}

/** One webhook for a fresh registration at `targetUrl`, enqueued with its NOTIFY. */
async function oneWebhook(targetUrl: string): Promise<number> {
  const { partyId } = await registered(targetUrl);
  const [id] = await seedChange(api.db.knex, propertyChange(partyId, 1));
  return id!;
}

/** Locks rows of `table` in a transaction of its own until `release()`, as a concurrent writer would. */
async function holdRowLocks(table: string, ids: number[]): Promise<{ release(): Promise<void> }> {
  let release!: () => void;
  const released = new Promise<void>((resolve) => (release = resolve));
  let locked!: () => void;
  const holding = new Promise<void>((resolve) => (locked = resolve));
  const done = api.db.knex.transaction(async (trx) => {
    await trx(table).whereIn('id', ids).forUpdate().select('id');
    locked();
    await released;
  });
  await holding;
  return {
    release: async () => {
      release();
      await done;
    },
  };
}

/** Milliseconds from the end of attempt `a` to the start of attempt `b`. */
const gap = (a: AttemptRow, b: AttemptRow) =>
  b.started_at.getTime() - (a.started_at.getTime() + a.duration_ms);

describe('wake-ups', () => {
  // first in the file, so no retry of another test is due and could wake the dispatcher instead
  it('delivers a webhook written through the API at once (the NOTIFY wakes the dispatcher), as JSON with the platform user-agent', async () => {
    const party = await buildParty(api.deps, { type: 2 });
    const account = await buildAccount(api.deps, { partyId: party.id });
    const { accessToken } = await login(api, account.email);
    const hook = await target();
    const registration = await seedRegistration(api.db.knex, { partyId: party.id, targetUrl: hook.url });
    const propertyId = await createProperty(api, accessToken, 'Notified');
    const [webhook] = await api.db.knex('webhooks').where({ registration_id: registration.id }).select('id');
    // 10 s, while the dispatcher's poll would take 60 s
    await waitForWebhook(api.db.knex, webhook.id, Successful, { timeoutMs: 10_000 });
    expect(hook.requests).toHaveLength(1);
    expect(bodyOf(hook.requests[0]!)).toMatchObject({
      entity: { id: propertyId, name: 'Notified' },
      event: { type: 1, entityName: 'Property' },
      initiatorPartyId: party.id,
      initiatorAccountId: account.id,
    });
    // the headers as the target received them (docs/webhooks.md#the-delivery-request): a JSON body, and a user-agent naming
    // the platform so a receiver can tell its deliveries from other traffic
    const { headers } = hook.requests[0]!;
    expect(headers['content-type']).toBe('application/json');
    expect(headers['user-agent']).toBe(WEBHOOK_USER_AGENT);
    expect(headers['user-agent']).toMatch(/^PlatformWebhooks\/\d/);
  });

  it('picks up a retry falling due with its own timer, without any NOTIFY', async () => {
    const hook = await target((n) => (n === 1 ? { status: 500 } : { status: 200 }));
    const id = await oneWebhook(hook.url);
    // the enqueue's NOTIFY brings attempt 1; nothing notifies about the retry it schedules
    await waitForWebhook(api.db.knex, id, Successful, { timeoutMs: 10_000 });
    const attempts = await attemptsOf(api.db.knex, id);
    expect(attempts.map((a) => [a.number, a.status_code])).toEqual([
      [1, 500],
      [2, 200],
    ]);
    expect(gap(attempts[0]!, attempts[1]!)).toBeGreaterThanOrEqual(SCHEDULE[1]! - SLACK_MS);
  });

  it('claims again after a claim during which a NOTIFY came: its snapshot could not see that work', async () => {
    // A claim is held up on a target row (an open breaker's trial; its due webhook locked too, so
    // the claim takes nothing); meanwhile another webhook is written and its NOTIFY arrives. The
    // claim's snapshot predates that webhook, and its answer (a trial in flight) says to look
    // again only when the trial's lease runs out, half a minute away.
    const blocked = await registered((await target()).url);
    const { target_id: targetId } = await api.db
      .knex('webhook_registrations')
      .where({ id: blocked.registrationId })
      .first('target_id');
    await api.db
      .knex('webhook_targets')
      .where({ id: targetId })
      .update({ breaker_state: 'open', open_until: new Date(Date.now() - 1_000) });
    const holdTarget = await holdRowLocks('webhook_targets', [targetId]);
    const [blockedId] = await seedChange(api.db.knex, propertyChange(blocked.partyId, 1));
    const holdWebhook = await holdRowLocks('webhooks', [blockedId!]);
    await notifyWebhookDue(api.db.knex);
    await waitForLockWaiter(api.db.knex);

    const hook = await target();
    const id = await oneWebhook(hook.url);
    await holdTarget.release();
    // the held-up claim ends: the trial is the claim's, but it could take no webhook
    await eventually(
      async () =>
        (await api.db.knex('webhook_targets').where({ id: targetId }).first('breaker_state'))
          .breaker_state === 'half-open',
      { what: 'the trial taken' },
    );
    await holdWebhook.release();
    // 10 s, while the trial's lease (and the poll) would take 30 s or more
    await waitForWebhook(api.db.knex, id, Successful, { timeoutMs: 10_000 });
    expect(hook.requests).toHaveLength(1);
  });
});

describe('an attempt', () => {
  it('that succeeds makes the webhook Successful, with one attempt holding status, duration and answer', async () => {
    const hook = await target(() => ({ status: 201, body: 'accepted', delayMs: 40 }));
    const id = await oneWebhook(hook.url);
    const row = await waitForWebhook(api.db.knex, id, Successful);
    expect(row).toMatchObject({ attempt_count: 1, locked_by: null });
    expect(row.completed_at).toBeInstanceOf(Date);
    const attempts = await attemptsOf(api.db.knex, id);
    expect(attempts).toEqual([
      {
        number: 1,
        started_at: expect.any(Date),
        duration_ms: expect.any(Number),
        status_code: 201,
        error_kind: null,
        response_body: 'accepted',
      },
    ]);
    expect(attempts[0]!.duration_ms).toBeGreaterThanOrEqual(40);
    expect(attempts[0]!.started_at.getTime()).toBeLessThanOrEqual(row.completed_at!.getTime());
    expect(hook.requests).toHaveLength(1);
    expect(hook.requests[0]!.webhookId).toBe(String(id));
  });

  const failures: {
    name: string;
    /** The target's answer, given the target's origin. */
    answer?: (origin: string) => TargetAnswer;
    url?: () => Promise<string>;
    expected: Partial<AttemptRow>;
  }[] = [
    {
      name: 'a 500',
      answer: () => ({ status: 500, body: 'boom' }),
      expected: { status_code: 500, error_kind: 'status', response_body: 'boom' },
    },
    {
      // recorded like any other status; it also disables the registration, never removes it
      // (docs/webhooks.md#registrations; registration-status.test.ts)
      name: '410 Gone, recorded like any other status',
      answer: () => ({ status: 410, body: 'gone' }),
      expected: { status_code: 410, error_kind: 'status', response_body: 'gone' },
    },
    {
      name: 'a redirect, which is not followed',
      answer: (origin) => ({ status: 302, headers: { location: `${origin}/moved` }, body: 'moved' }),
      expected: { status_code: 302, error_kind: 'redirect', response_body: 'moved' },
    },
    {
      name: 'a target hanging past WEBHOOK_TIMEOUT',
      answer: () => ({ hang: true }),
      expected: { status_code: null, error_kind: 'timeout', response_body: null },
    },
    {
      name: 'a refused connection',
      url: refusingUrl,
      expected: { status_code: null, error_kind: 'connection-refused', response_body: null },
    },
    {
      name: 'a connection reset without an answer',
      answer: () => ({ reset: true }),
      expected: { status_code: null, error_kind: 'connection-reset', response_body: null },
    },
    {
      name: 'a 100 KB answer, of which the first 4 KiB are kept',
      answer: () => ({ status: 503, body: `head-${'z'.repeat(100 * 1024)}` }),
      expected: { status_code: 503, error_kind: 'status', response_body: `head-${'z'.repeat(4096 - 5)}` },
    },
  ];

  it.each(failures)('fails on $name, recorded with its error kind, and is retried', async (failure) => {
    const hook: TestTarget = await target(() => failure.answer?.(hook.origin) ?? {});
    const id = await oneWebhook(failure.url ? await failure.url() : hook.url);
    await eventually(async () => (await attemptsOf(api.db.knex, id)).length >= 1, {
      what: 'attempt 1 recorded',
    });
    const [first] = await attemptsOf(api.db.knex, id);
    expect(first).toMatchObject({ number: 1, ...failure.expected });
    if (failure.expected.error_kind === 'timeout') {
      expect(first!.duration_ms).toBeGreaterThanOrEqual(TIMEOUT_MS - SLACK_MS);
    }
    // a failure is never final on attempt 1: Retrying (or already on its next attempt)
    expect([Created, Retrying]).toContain((await webhookRow(api.db.knex, id)).state);
    // the redirect's target on the same server was never asked
    expect(hook.requests.filter((r) => r.path !== '/hook')).toEqual([]);
  });

  it('that cannot be prepared (an unreadable signing secret) fails as internal, reaching no target', async () => {
    const hook = await target();
    const party = await buildParty(api.deps, { type: 2 });
    const { id: registrationId } = await seedRegistration(api.db.knex, {
      partyId: party.id,
      targetUrl: hook.url,
    });
    // sealed with another key than the dispatcher's
    await api.db
      .knex('webhook_registrations')
      .where({ id: registrationId })
      .update({ signing_secret: createSecretBox(randomBytes(32)).seal('whsec_AAAA') });
    const [id] = await seedChange(api.db.knex, propertyChange(party.id, 1));
    await eventually(async () => (await attemptsOf(api.db.knex, id!)).length >= 1, {
      what: 'attempt 1 recorded',
    });
    expect((await attemptsOf(api.db.knex, id!))[0]).toMatchObject({
      number: 1,
      status_code: null,
      error_kind: 'internal',
      response_body: null,
    });
    expect(hook.requests).toEqual([]);
  });

  it('stores the answer of a target that sends binary (NUL bytes), losing no result', async () => {
    const hook = await target(() => ({ status: 200, body: Buffer.from([0x6f, 0x6b, 0x00, 0xff]) }));
    const id = await oneWebhook(hook.url);
    await waitForWebhook(api.db.knex, id, Successful, { attempts: 1 });
    expect((await attemptsOf(api.db.knex, id))[0]!.response_body).toBe('ok\ufffd\ufffd');
    expect(hook.requests).toHaveLength(1);
  });
});

describe('the retry schedule', () => {
  it('makes seven attempts spaced by the schedule, then Failed; webhook-id stays the same', async () => {
    const hook = await target(() => ({ status: 500, body: 'still broken' }));
    const id = await oneWebhook(hook.url);
    const row = await waitForWebhook(api.db.knex, id, Failed, { attempts: 7 });
    expect(row).toMatchObject({ attempt_count: 7, locked_by: null });
    expect(row.completed_at).toBeInstanceOf(Date);
    const attempts = await attemptsOf(api.db.knex, id);
    expect(attempts.map((a) => [a.number, a.status_code, a.error_kind])).toEqual(
      [1, 2, 3, 4, 5, 6, 7].map((n) => [n, 500, 'status']),
    );
    for (let n = 1; n < 7; n++) {
      expect(gap(attempts[n - 1]!, attempts[n]!), `wait before attempt ${n + 1}`).toBeGreaterThanOrEqual(
        SCHEDULE[n]! - SLACK_MS,
      );
    }
    // receivers dedupe on webhook-id: every retry carries the same one, with a fresh timestamp
    expect(hook.requests.map((r) => r.webhookId)).toEqual(Array(7).fill(String(id)));
    const timestamps = hook.requests.map((r) => Number(r.headers['webhook-timestamp']));
    expect(timestamps).toEqual([...timestamps].sort((a, b) => a - b));
  });

  it('waits as long as Retry-After asks on a 429, and clamps a 503 Retry-After to twice the step', async () => {
    const hook = await target((n) => {
      if (n === 1) return { status: 429, headers: { 'retry-after': '1' } };
      if (n === 2) return { status: 503, headers: { 'retry-after': '3600' } };
      return { status: 200 };
    });
    const id = await oneWebhook(hook.url);
    // an hour's wait would outlast this limit by far: arriving at all proves the clamp
    await waitForWebhook(api.db.knex, id, Successful, { attempts: 3, timeoutMs: 20_000 });
    const [first, second, third] = await attemptsOf(api.db.knex, id);
    // the schedule says 600 ms; the target asked for 1 s, within twice the step
    expect(gap(first!, second!)).toBeGreaterThanOrEqual(1_000 - SLACK_MS);
    // the schedule says 700 ms; the target asked for an hour; twice the step is 1.4 s
    expect(gap(second!, third!)).toBeGreaterThanOrEqual(2 * SCHEDULE[2]! - SLACK_MS);
    expect([first!.status_code, second!.status_code, third!.status_code]).toEqual([429, 503, 200]);
  });
});
