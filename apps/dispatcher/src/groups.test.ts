import type { Knex } from '@platform/db';
import { enqueueEntityChange, notifyWebhookDue } from '@platform/db';
import { WebhookState, type BlockedGroupRead, type Page, type WebhookRead } from '@platform/shared';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createProperty, patchProperty } from '../../api/tests/support/webhooks';
import { buildAccount, buildParty, login, useTestApi } from '../../api/tests/support/api';
import {
  attemptsOf,
  bodyOf,
  type DispatcherProcess,
  propertyChange,
  type ReceivedRequest,
  seedChange,
  seedRegistration,
  type SeedRegistrationOptions,
  startDispatcher,
  startTestTarget,
  type TestTarget,
  waitForWebhook,
  webhookRow,
} from '@platform/testkit';
import { readJson } from '../../api/tests/support/http';

const { Retrying, Successful, Failed, Aborted, Pending, Resolved } = WebhookState;

// Group order (docs/webhooks.md#ordering) and the operator actions that end or repeat a webhook, as
// the real dispatcher process and the real API do them. The schedule is fast, so a webhook is
// Failed within a second; the poll is a minute, so every promotion within the tests' limits was
// picked up by the dispatcher right after it wrote the release.

const SCHEDULE = '0s,50ms,50ms,50ms,50ms,50ms,50ms';

const { api } = useTestApi();
let dispatcher: DispatcherProcess;
/** An Admin's token, for the operator actions. */
let operator: string;
const targets: TestTarget[] = [];

beforeAll(async () => {
  const admin = await buildParty(api.deps, { type: 1 });
  const account = await buildAccount(api.deps, { partyId: admin.id });
  operator = (await login(api, account.email)).accessToken;
  dispatcher = await startDispatcher(api.db.url, {
    WEBHOOK_RETRY_SCHEDULE: SCHEDULE,
    WEBHOOK_TIMEOUT: '2s',
    DISPATCHER_POLL_INTERVAL: '60s',
    // a blocker fails all seven attempts, and a retried one an eighth, at its target: at the
    // default 5 the breaker would record the last ones as circuit-open, sending nothing
    // (breaker.test.ts is about that)
    DISPATCHER_BREAKER_FAILURES: '10',
  });
});

afterAll(async () => {
  if (dispatcher) expect(await dispatcher.stop()).toBe(0);
  await Promise.all(targets.map((t) => t.close()));
});

/**
 * A target answering 500 to deliveries whose entity says `fail: true` (while `failing` is on)
 * and 200 to the rest, after `delayMs`, so overlapping deliveries would show.
 */
async function target(options: { delayMs?: number } = {}): Promise<TestTarget & { failing: boolean }> {
  const started = Object.assign(await startTestTarget(), { failing: true });
  started.script = (request) => {
    const fail = started.failing && bodyOf(request).entity.fail === true;
    return { status: fail ? 500 : 200, delayMs: options.delayMs ?? 0 };
  };
  targets.push(started);
  return started;
}

/** A Property Management Company of its own, so no other test's changes fan out to its registrations. */
async function party(): Promise<number> {
  return (await buildParty(api.deps, { type: 2 })).id;
}

async function registration(
  partyId: number,
  targetUrl: string,
  options: Omit<SeedRegistrationOptions, 'partyId' | 'targetUrl'> = {},
): Promise<number> {
  return (await seedRegistration(api.db.knex, { partyId, targetUrl, ...options })).id;
}

/** Enqueues one change of Property `entityId` and answers its webhook id per registration id. */
async function fanOut(
  partyId: number,
  entityId: number,
  extra: Record<string, unknown> = {},
): Promise<Map<number, number>> {
  const ids = await seedChange(api.db.knex, propertyChange(partyId, entityId, extra));
  const rows: { id: number; registration_id: number }[] = await api.db
    .knex('webhooks')
    .whereIn('id', ids)
    .select('id', 'registration_id');
  return new Map(rows.map((r) => [r.registration_id, r.id]));
}

/** Enqueues one change of Property `entityId` and answers the webhook it made for `registrationId`. */
async function change(
  partyId: number,
  registrationId: number,
  entityId: number,
  extra: Record<string, unknown> = {},
): Promise<number> {
  return (await fanOut(partyId, entityId, extra)).get(registrationId)!;
}

/** Calls an operator action on a webhook and answers the webhook it returns. */
async function act(id: number, action: 'abort' | 'resolve' | 'retry'): Promise<WebhookRead> {
  const response = await api.fetch(`/api/webhooks/${id}/${action}`, { method: 'POST', token: operator });
  return readJson<WebhookRead>(response);
}

/** The webhook ids, in order of arrival, of the requests a target received. */
const arrivals = (hook: TestTarget) => hook.requests.map((r) => Number(r.webhookId));

/** Asserts each request arrived only after the one before it was answered: never two at once. */
function expectOneAtATime(requests: ReceivedRequest[]): void {
  for (let i = 1; i < requests.length; i++) {
    const before = requests[i - 1]!;
    expect(before.answeredAt, `request ${before.index} answered`).toBeDefined();
    expect(requests[i]!.receivedAt).toBeGreaterThanOrEqual(before.answeredAt!);
  }
}

describe('a grouped registration', () => {
  it('delivers the changes of one entity strictly in order, one at a time (through the API write path)', async () => {
    const partyId = await party();
    const account = await buildAccount(api.deps, { partyId });
    const { accessToken } = await login(api, account.email);
    const hook = await target({ delayMs: 30 });
    const registrationId = await registration(partyId, hook.url, { shouldGroup: true });

    const first = await createProperty(api, accessToken, 'First');
    const second = await createProperty(api, accessToken, 'Second');
    for (let i = 1; i <= 6; i++) {
      await patchProperty(api, accessToken, first, { notes: `first ${i}` });
      await patchProperty(api, accessToken, second, { notes: `second ${i}` });
    }
    const webhooks: { id: number; group_key: string; group_seq: number }[] = await api.db
      .knex('webhooks')
      .where({ registration_id: registrationId })
      .orderBy('id')
      .select('id', 'group_key', 'group_seq');
    expect(webhooks).toHaveLength(14);
    for (const webhook of webhooks) await waitForWebhook(api.db.knex, webhook.id, Successful);

    for (const propertyId of [first, second]) {
      const group = webhooks.filter((w) => w.group_key === `Property:${propertyId}`);
      expect(group.map((w) => w.group_seq)).toEqual([1, 2, 3, 4, 5, 6, 7]);
      const received = hook.requests.filter((r) => group.some((w) => String(w.id) === r.webhookId));
      // each delivered once, in the order the changes were written
      expect(received.map((r) => Number(r.webhookId))).toEqual(group.map((w) => w.id));
      expect(received.map((r) => bodyOf(r).entity.notes)).toEqual([
        null,
        ...[1, 2, 3, 4, 5, 6].map((i) => `${propertyId === first ? 'first' : 'second'} ${i}`),
      ]);
      expectOneAtATime(received);
    }
  });

  it('keeps the order of many changes of one entity written in one transaction', async () => {
    const partyId = await party();
    const hook = await target({ delayMs: 5 });
    const registrationId = await registration(partyId, hook.url, { shouldGroup: true });
    await api.db.knex.transaction(async (trx: Knex.Transaction) => {
      for (let seq = 1; seq <= 20; seq++) {
        await enqueueEntityChange(trx, propertyChange(partyId, 7, { seq }));
      }
      await notifyWebhookDue(trx);
    });
    const ids: number[] = (
      await api.db
        .knex('webhooks')
        .where({ registration_id: registrationId })
        .orderBy('group_seq')
        .select('id')
    ).map((r: { id: number }) => r.id);
    for (const id of ids) await waitForWebhook(api.db.knex, id, Successful);
    expect(hook.requests.map((r) => bodyOf(r).entity.seq)).toEqual(ids.map((_, i) => i + 1));
    expectOneAtATime(hook.requests);
  });

  it('holds a group behind its Failed webhook until an operator resolves it; then the next goes', async () => {
    const partyId = await party();
    const hook = await target();
    const registrationId = await registration(partyId, hook.url, { shouldGroup: true });
    const blocker = await change(partyId, registrationId, 1, { fail: true });
    const next = await change(partyId, registrationId, 1);
    const last = await change(partyId, registrationId, 1);

    await waitForWebhook(api.db.knex, blocker, Failed, { attempts: 7 });
    // the webhooks behind it are Pending, which the claim never takes, and none was sent
    expect((await webhookRow(api.db.knex, next)).state).toBe(Pending);
    expect((await webhookRow(api.db.knex, last)).state).toBe(Pending);
    expect(arrivals(hook).filter((id) => id !== blocker)).toEqual([]);
    const blocked = (await (
      await api.fetch(`/api/webhook-groups?blocked=true&registrationId=${registrationId}`, {
        token: operator,
      })
    ).json()) as Page<BlockedGroupRead>;
    expect(blocked.items).toMatchObject([
      { groupKey: 'Property:1', blockerWebhookId: blocker, pendingCount: 2 },
    ]);

    const resolvedAt = Date.now();
    expect((await act(blocker, 'resolve')).state).toBe(Resolved);
    await waitForWebhook(api.db.knex, last, Successful);
    expect((await webhookRow(api.db.knex, next)).state).toBe(Successful);
    expect(arrivals(hook)).toEqual([...Array(7).fill(blocker), next, last]);
    expect(hook.requestsFor(next)[0]!.receivedAt).toBeGreaterThanOrEqual(resolvedAt);
    expectOneAtATime(hook.requests.slice(7));
    // resolving is final: the blocker is never tried again
    expect(hook.requestsFor(blocker)).toHaveLength(7);
  });

  it('lets an abort release a blocked group the same way', async () => {
    const partyId = await party();
    const hook = await target();
    const registrationId = await registration(partyId, hook.url, { shouldGroup: true });
    const blocker = await change(partyId, registrationId, 1, { fail: true });
    const next = await change(partyId, registrationId, 1);
    await waitForWebhook(api.db.knex, blocker, Failed, { attempts: 7 });
    expect((await webhookRow(api.db.knex, next)).state).toBe(Pending);
    expect(hook.requestsFor(next)).toEqual([]);

    expect((await act(blocker, 'abort')).state).toBe(Aborted);
    await waitForWebhook(api.db.knex, next, Successful, { attempts: 1 });
    expect(arrivals(hook)).toEqual([...Array(7).fill(blocker), next]);
  });

  it('holds back nothing outside the blocked group: other entities, and ungrouped registrations', async () => {
    const partyId = await party();
    const groupedHook = await target();
    const plainHook = await target();
    const grouped = await registration(partyId, groupedHook.url, { shouldGroup: true });
    const plain = await registration(partyId, plainHook.url);
    // each change fans out to both registrations
    const failing = await fanOut(partyId, 1, { fail: true });
    const blocker = failing.get(grouped)!;
    await waitForWebhook(api.db.knex, blocker, Failed, { attempts: 7 });

    const sameEntity = await fanOut(partyId, 1);
    const otherEntity = await fanOut(partyId, 2);
    // the other group of the blocked registration goes, and the ungrouped registration delivers
    // everything, the blocked entity's change included
    for (const id of [otherEntity.get(grouped)!, sameEntity.get(plain)!, otherEntity.get(plain)!]) {
      await waitForWebhook(api.db.knex, id, Successful, { attempts: 1 });
    }
    const held = sameEntity.get(grouped)!;
    expect((await webhookRow(api.db.knex, held)).state).toBe(Pending);
    expect(groupedHook.requestsFor(held)).toEqual([]);
    // the ungrouped registration's failing webhook ran its own course, blocking nothing
    await waitForWebhook(api.db.knex, failing.get(plain)!, Failed, { attempts: 7 });
    expect(plainHook.requests).toHaveLength(9);
  });
});

describe('a grouped registration with shouldGroupContinueAfterFail', () => {
  it('delivers the next webhook of the group once the one before it is Failed, without an operator', async () => {
    const partyId = await party();
    const hook = await target();
    const registrationId = await registration(partyId, hook.url, {
      shouldGroup: true,
      shouldGroupContinueAfterFail: true,
    });
    const failing = await change(partyId, registrationId, 1, { fail: true });
    const next = await change(partyId, registrationId, 1);
    const last = await change(partyId, registrationId, 1);
    await waitForWebhook(api.db.knex, last, Successful);
    expect((await webhookRow(api.db.knex, failing)).state).toBe(Failed);
    expect((await webhookRow(api.db.knex, next)).state).toBe(Successful);
    // still in order: the next went only after the last attempt of the Failed one
    expect(arrivals(hook)).toEqual([...Array(7).fill(failing), next, last]);
    expectOneAtATime(hook.requests);
  });
});

describe('retry of a Failed webhook', () => {
  it('makes exactly one more attempt', async () => {
    const partyId = await party();
    const hook = await target();
    const registrationId = await registration(partyId, hook.url);
    const id = await change(partyId, registrationId, 1, { fail: true });
    await waitForWebhook(api.db.knex, id, Failed, { attempts: 7 });

    expect((await act(id, 'retry')).state).toBe(Retrying);
    // one attempt, then Failed again: the claim made it attempt 8, past the schedule's end
    await waitForWebhook(api.db.knex, id, Failed, { attempts: 8 });
    expect((await attemptsOf(api.db.knex, id)).map((a) => a.number)).toEqual([1, 2, 3, 4, 5, 6, 7, 8]);
    expect(hook.requestsFor(id)).toHaveLength(8);

    // once the target is mended, a retry delivers it
    hook.failing = false;
    await act(id, 'retry');
    const row = await waitForWebhook(api.db.knex, id, Successful, { attempts: 9 });
    expect(row.attempt_count).toBe(9);
    expect(hook.requestsFor(id)).toHaveLength(9);
  });

  it("keeps a group's Failed blocker at its head; delivered, it lets the next go", async () => {
    const partyId = await party();
    const hook = await target();
    const registrationId = await registration(partyId, hook.url, { shouldGroup: true });
    const blocker = await change(partyId, registrationId, 1, { fail: true });
    const next = await change(partyId, registrationId, 1);
    await waitForWebhook(api.db.knex, blocker, Failed, { attempts: 7 });

    hook.failing = false;
    await act(blocker, 'retry');
    await waitForWebhook(api.db.knex, next, Successful, { attempts: 1 });
    expect((await webhookRow(api.db.knex, blocker)).state).toBe(Successful);
    expect(arrivals(hook)).toEqual([...Array(8).fill(blocker), next]);
    expectOneAtATime(hook.requests);
  });
});
