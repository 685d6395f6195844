import { enqueueEntityChange, notifyWebhookDue, pauseRegistration, resumeRegistration } from '@platform/db';
import { WebhookState } from '@platform/shared';
import {
  attemptsOf,
  bodyOf,
  eventually,
  propertyChange,
  seedChange,
  seedParty,
  seedRegistration,
  type TestTarget,
  waitForWebhook,
  webhookRow,
} from '@platform/testkit';
import { useDispatcherTestbed } from '@platform/testkit/testbed';
import { describe, expect, it } from 'vitest';
import { buildAccount } from '../../api/tests/support/api';

// A registration's delivery status with the real dispatcher process: automatic disable (a 410,
// or failing for WEBHOOK_DISABLE_AFTER with at least WEBHOOK_DISABLE_MIN_ATTEMPTS attempts), an
// operator's pause, and resume, which delivers what waited, each group in order. The poll is a
// minute, so anything within the tests' limits was woken by a NOTIFY or a retry's own timer.

const { Created, Retrying, Pending, Successful } = WebhookState;
const STEP_MS = 800;
const SLACK_MS = 5;

const testbed = useDispatcherTestbed({
  WEBHOOK_RETRY_SCHEDULE: ['0ms', ...Array(6).fill(`${STEP_MS}ms`)].join(','),
  WEBHOOK_DISABLE_AFTER: '2s',
  WEBHOOK_DISABLE_MIN_ATTEMPTS: '3',
  DISPATCHER_POLL_INTERVAL: '60s',
  // these tests are about registrations; the breaker (breaker.test.ts) must not step in
  DISPATCHER_BREAKER_FAILURES: '100',
});
const { db, target } = testbed;

/** A party of its own with one grouped registration at `url`. */
async function registered(url: string): Promise<{ partyId: number; registrationId: number }> {
  const partyId = await seedParty(db.knex);
  const { id } = await seedRegistration(db.knex, { partyId, targetUrl: url, shouldGroup: true });
  return { partyId, registrationId: id };
}

/**
 * Changes of entity 1 (three) and entity 2 (two), marked with their order, in one transaction (one
 * NOTIFY, so both group heads are claimed together): two groups. Answers the webhook ids in order.
 */
async function twoGroups(partyId: number): Promise<number[]> {
  return db.knex.transaction(async (trx) => {
    const before = ((await trx('webhooks').max('id as id').first()) as { id: number | null }).id ?? 0;
    for (const [entityId, seq] of [
      [1, 1],
      [2, 1],
      [1, 2],
      [2, 2],
      [1, 3],
    ] as const) {
      await enqueueEntityChange(trx, propertyChange(partyId, entityId, { seq }));
    }
    await notifyWebhookDue(trx);
    return (await trx('webhooks').where('id', '>', before).orderBy('id').pluck('id')).map(Number);
  });
}

/** Per entity, the `seq` of the successful deliveries in order of arrival. */
function deliveredOrder(hook: TestTarget): Record<number, number[]> {
  const order: Record<number, number[]> = {};
  for (const request of hook.requests) {
    const { entity } = bodyOf<{ entity: { id: number; seq: number } }>(request);
    (order[entity.id] ??= []).push(entity.seq);
  }
  return order;
}

async function disabledCount(reason: 'gone' | 'failing'): Promise<number> {
  const text = await (await fetch(`http://127.0.0.1:${testbed.dispatcher.port}/metrics`)).text();
  const line = new RegExp(`^dispatcher_registrations_disabled_total\\{reason="${reason}"\\} (\\d+)$`, 'm');
  return Number(line.exec(text)?.[1] ?? 0);
}

const statusOf = (registrationId: number) =>
  db
    .knex('webhook_registrations')
    .where({ id: registrationId })
    .first('status', 'disabled_reason', 'status_changed', 'failing_since', 'failures_since_success');

const resume = (registrationId: number) =>
  db.knex.transaction((trx) => resumeRegistration(trx, registrationId, new Date()));

/** The rows of `ids`: state, counted tries and attempt rows. */
const progress = async (ids: number[]) =>
  Promise.all(
    ids.map(async (id) => {
      const row = await webhookRow(db.knex, id);
      return {
        id,
        state: row.state,
        tries: row.attempt_count,
        attempts: (await attemptsOf(db.knex, id)).length,
      };
    }),
  );

describe('a registration disabled by a 410', () => {
  it('is disabled (gone), mails its party’s accounts that hold a Webhook permission, is counted, keeps every webhook unclaimed; resume delivers each group in order', async () => {
    let gone = true;
    const hook = await target(() => (gone ? { status: 410, body: 'gone' } : { status: 200 }));
    const { partyId, registrationId } = await registered(hook.url);
    const deps = { knex: db.knex };
    const reader = await buildAccount(deps, { partyId, permissions: ['Webhook.Read'] });
    const updater = await buildAccount(deps, { partyId, permissions: ['Property.Read', 'Webhook.Update'] });
    const other = await buildAccount(deps, { partyId, permissions: ['Property.Read'] });
    const former = await buildAccount(deps, { partyId, permissions: ['Webhook.Read'] });
    await db.knex('accounts').where({ id: former.id }).update({ deleted: new Date() });
    const stranger = await buildAccount(deps, { partyId: await seedParty(db.knex), permissions: 'all' });

    const ids = await twoGroups(partyId);
    await eventually(async () => (await statusOf(registrationId)).status === 'disabled', {
      what: 'the registration disabled',
    });
    gone = false;
    expect(await statusOf(registrationId)).toMatchObject({ disabled_reason: 'gone' });
    // the two group heads were tried (410) and wait Retrying; the rest wait behind them
    const heads = [ids[0]!, ids[1]!];
    await eventually(async () => (await progress(heads)).every((w) => w.attempts === 1), {
      what: 'both heads recorded',
    });
    const due = Math.max(
      ...(await Promise.all(
        heads.map(async (id) => (await webhookRow(db.knex, id)).next_attempt_at.getTime()),
      )),
    );

    const mails = await db
      .knex('mail_outbox')
      .orderBy('to_address')
      .select('to_address', 'subject', 'text_body', 'kind');
    expect(mails.map((m) => m.to_address).sort()).toEqual([reader.email, updater.email].sort());
    for (const mail of mails) {
      expect(mail.kind).toBe('webhook-registration-disabled');
      expect(mail.subject).toContain(hook.url);
      expect(mail.text_body).toContain('410 Gone');
    }
    expect(mails.map((m) => m.to_address)).not.toContain(other.email);
    expect(mails.map((m) => m.to_address)).not.toContain(former.email);
    expect(mails.map((m) => m.to_address)).not.toContain(stranger.email);
    await eventually(async () => (await disabledCount('gone')) === 1, { what: 'the disable counted' });

    // the heads' retries fall due, and nothing is claimed: no try spent, nothing sent
    await new Promise((r) => setTimeout(r, due - Date.now() + 1_000));
    expect(await progress(ids)).toEqual([
      { id: ids[0], state: Retrying, tries: 1, attempts: 1 },
      { id: ids[1], state: Retrying, tries: 1, attempts: 1 },
      { id: ids[2], state: Pending, tries: 0, attempts: 0 },
      { id: ids[3], state: Pending, tries: 0, attempts: 0 },
      { id: ids[4], state: Pending, tries: 0, attempts: 0 },
    ]);
    expect(hook.requests).toHaveLength(2);

    await resume(registrationId);
    for (const id of ids) await waitForWebhook(db.knex, id, Successful);
    expect(await statusOf(registrationId)).toMatchObject({ status: 'active', disabled_reason: null });
    expect(deliveredOrder(hook)).toEqual({ 1: [1, 1, 2, 3], 2: [1, 1, 2] });
    expect(await db.knex('mail_outbox').count({ n: '*' })).toEqual([{ n: 2 }]);
  });
});

describe('a registration that keeps failing', () => {
  it('is disabled (failing) once every attempt failed for WEBHOOK_DISABLE_AFTER with enough attempts; a success restarts the run', async () => {
    // entity 1 always fails; entity 2 succeeds
    const hook = await target((request) => ({
      status: bodyOf<{ entity: { id: number } }>(request).entity.id === 2 ? 200 : 500,
    }));
    const { partyId, registrationId } = await registered(hook.url);
    const [failing] = await seedChange(db.knex, propertyChange(partyId, 1));
    await waitForWebhook(db.knex, failing!, Retrying, { attempts: 2 });
    const [succeeding] = await seedChange(db.knex, propertyChange(partyId, 2));
    await waitForWebhook(db.knex, succeeding!, Successful);
    const successAt = hook.requestsFor(succeeding!)[0]!.answeredAt!;

    await eventually(async () => (await statusOf(registrationId)).status === 'disabled', {
      what: 'the registration disabled',
      timeoutMs: 10_000,
    });
    const status = await statusOf(registrationId);
    expect(status).toMatchObject({ disabled_reason: 'failing' });
    // the run the success started: long enough in time, and at least 3 attempts
    expect(status.failing_since.getTime()).toBeGreaterThanOrEqual(successAt - SLACK_MS);
    expect(status.status_changed.getTime() - status.failing_since.getTime()).toBeGreaterThanOrEqual(2_000);
    expect(status.failures_since_success).toBeGreaterThanOrEqual(3);
    // kept: not Failed, though the attempts it had left are not spent
    const row = await webhookRow(db.knex, failing!);
    expect(row.state).toBe(Retrying);
    expect(row.attempt_count).toBeLessThan(7);
    await eventually(async () => (await disabledCount('failing')) === 1, { what: 'the disable counted' });
  });
});

describe('a paused registration', () => {
  it('gets no webhook claimed and spends no attempt while another is delivered; resume delivers every group in order', async () => {
    const pausedHook = await target();
    const otherHook = await target();
    const paused = await registered(pausedHook.url);
    const other = await registered(otherHook.url);
    await db.knex.transaction((trx) => pauseRegistration(trx, paused.registrationId, new Date()));
    expect(await statusOf(paused.registrationId)).toMatchObject({ status: 'paused' });

    // written first: due before the other registration's, whose delivery proves claims ran
    const ids = await twoGroups(paused.partyId);
    const otherIds = await twoGroups(other.partyId);
    for (const id of otherIds) await waitForWebhook(db.knex, id, Successful);
    expect(await progress(ids)).toEqual(
      ids.map((id, i) => ({ id, state: i < 2 ? Created : Pending, tries: 0, attempts: 0 })),
    );
    expect(pausedHook.requests).toEqual([]);

    await resume(paused.registrationId);
    for (const id of ids) await waitForWebhook(db.knex, id, Successful, { attempts: 1 });
    expect(deliveredOrder(pausedHook)).toEqual({ 1: [1, 2, 3], 2: [1, 2] });
  });
});
