import { createHmac } from 'node:crypto';
import {
  bodyOf,
  eventually,
  propertyChange,
  seedChange,
  seedParty,
  seedRegistration,
  type ReceivedRequest,
  testSecrets,
} from '@platform/testkit';
import { useDispatcherTestbed } from '@platform/testkit/testbed';
import { describe, expect, it } from 'vitest';
import { buildAccount } from '../../api/tests/support/api';

// Notifications to operators (docs/dispatcher.md#operator-notifications) with the real dispatcher
// process, real Postgres and real local receivers: a disabled registration and a breaker open
// for too long are told to the party's configured addresses (the mail outbox) and to its operator
// webhook, signed as Standard Webhooks with the party's operator secret; a breaker's opening once.

const OPERATOR_SECRET = `whsec_${Buffer.alloc(32, 7).toString('base64')}`;
const { db, target } = useDispatcherTestbed({
  WEBHOOK_RETRY_SCHEDULE: ['0ms', ...Array(9).fill('300ms')].join(','),
  WEBHOOK_DISABLE_AFTER: '1h',
  DISPATCHER_POLL_INTERVAL: '60s',
  DISPATCHER_BREAKER_FAILURES: '2',
  DISPATCHER_BREAKER_COOLDOWN: '500ms',
  DISPATCHER_BREAKER_MAX_COOLDOWN: '500ms',
  DISPATCHER_NOTIFY_INTERVAL: '200ms',
});

/** A party whose notifications go to `emails` and to the operator webhook `operatorUrl`. */
async function partyWithSettings(
  emails: string[] | null,
  operatorUrl: string,
  breakerOpenMinutes = 15,
): Promise<number> {
  const partyId = await seedParty(db.knex);
  await db.knex('webhook_notification_settings').insert({
    party_id: partyId,
    emails,
    webhook_url: operatorUrl,
    webhook_secret: testSecrets.seal(OPERATOR_SECRET),
    breaker_open_minutes: breakerOpenMinutes,
  });
  return partyId;
}

/** Checks the Standard Webhooks signature of `request` with the operator secret, by hand. */
function expectSigned(request: ReceivedRequest): void {
  const id = String(request.headers['webhook-id']);
  const timestamp = String(request.headers['webhook-timestamp']);
  const key = Buffer.from(OPERATOR_SECRET.slice('whsec_'.length), 'base64');
  const expected = createHmac('sha256', key).update(`${id}.${timestamp}.${request.body}`).digest('base64');
  expect(id).toMatch(/^opn_\d+$/);
  expect(String(request.headers['webhook-signature']).split(' ')).toContain(`v1,${expected}`);
  expect(request.headers['content-type']).toBe('application/json');
}

const mailsOf = (kind: string, to: string[]) =>
  db
    .knex('mail_outbox')
    .where({ kind })
    .whereIn('to_address', to)
    .orderBy('id')
    .select('to_address', 'subject', 'text_body');

describe('a registration disabled by a 410', () => {
  it('mails the addresses the party set (not its accounts) and posts its operator webhook, signed, in the transaction that disabled it', async () => {
    const operator = await target(() => ({ status: 204 }));
    const partyId = await partyWithSettings(['ops@example.com'], operator.url);
    const account = await buildAccount({ knex: db.knex }, { partyId, permissions: ['Webhook.Update'] });
    const gone = await target(() => ({ status: 410 }));
    const { id: registrationId } = await seedRegistration(db.knex, { partyId, targetUrl: gone.url });
    await seedChange(db.knex, propertyChange(partyId, 1));

    await eventually(async () => operator.requests.length === 1, { what: 'the operator webhook' });
    const [request] = operator.requests;
    expectSigned(request!);
    expect(bodyOf(request!)).toMatchObject({
      type: 'registration-disabled',
      partyId,
      registrationId,
      targetUrl: gone.url,
      reason: 'gone',
      occurredAt: expect.any(String),
    });
    const mails = await mailsOf('webhook-registration-disabled', ['ops@example.com', account.email]);
    expect(mails.map((mail) => mail.to_address)).toEqual(['ops@example.com']);
    expect(mails[0]!.text_body).toContain('410 Gone');
    // the row was written with the disable, and is delivered
    await eventually(
      async () =>
        (await db.knex('operator_notifications').where({ party_id: partyId }).first('delivered_at'))
          ?.delivered_at != null,
      { what: 'the operator webhook marked delivered' },
    );
    const { status } = await db.knex('webhook_registrations').where({ id: registrationId }).first('status');
    expect(status).toBe('disabled');
  });
});

describe('a breaker that stays open', () => {
  it('is told once per opening after the party’s threshold, however many deliveries it skips; a new opening is told again', async () => {
    const operator = await target(() => ({ status: 200 }));
    const partyId = await partyWithSettings(['oncall@example.com'], operator.url, 1);
    let failing = true;
    const endpoint = await target(() => ({ status: failing ? 500 : 200 }));
    const { id: registrationId } = await seedRegistration(db.knex, { partyId, targetUrl: endpoint.url });
    const targetRow = () =>
      db
        .knex('webhook_targets as t')
        .join('webhook_registrations as r', 'r.target_id', 't.id')
        .where('r.id', registrationId)
        .first('t.id', 't.breaker_state', 't.open_since', 't.open_notified_at');
    const breakerNotices = () =>
      operator.requests.filter((r) => bodyOf<{ type: string }>(r).type === 'breaker-open');

    // three entities: the breaker opens after two failures and skips the rest meanwhile
    for (const entityId of [1, 2, 3]) await seedChange(db.knex, propertyChange(partyId, entityId));
    await eventually(async () => (await targetRow()).open_since !== null, { what: 'the breaker opened' });
    // not told before the threshold (a minute), whatever it skipped
    await new Promise((resolve) => setTimeout(resolve, 1_000));
    expect(breakerNotices()).toHaveLength(0);

    // a minute on: told once
    const { id: targetId } = await targetRow();
    await db
      .knex('webhook_targets')
      .where({ id: targetId })
      .update({ open_since: db.knex.raw(`now() - interval '2 minutes'`) });
    await eventually(async () => breakerNotices().length === 1, { what: 'the breaker told' });
    expectSigned(breakerNotices()[0]!);
    expect(bodyOf(breakerNotices()[0]!)).toMatchObject({
      type: 'breaker-open',
      partyId,
      targetUrl: endpoint.url,
      registrationIds: [registrationId],
    });
    // more skips and notifier turns later, still once
    await new Promise((resolve) => setTimeout(resolve, 1_500));
    expect(breakerNotices()).toHaveLength(1);
    expect(await mailsOf('webhook-breaker-open', ['oncall@example.com'])).toHaveLength(1);

    // the endpoint recovers: the breaker closes and the opening is over
    failing = false;
    // a fresh change, so there is a delivery to be the half-open trial even when the earlier
    // ones have used up their tries meanwhile
    await seedChange(db.knex, propertyChange(partyId, 7));
    await eventually(async () => (await targetRow()).breaker_state === 'closed', {
      what: 'the breaker closed',
      timeoutMs: 30_000,
    });
    expect(await targetRow()).toMatchObject({ open_since: null, open_notified_at: null });

    // it fails again: a new opening, told again once its minute is up
    failing = true;
    for (const entityId of [4, 5, 6]) await seedChange(db.knex, propertyChange(partyId, entityId));
    await eventually(async () => (await targetRow()).open_since !== null, {
      what: 'the breaker opened again',
    });
    await db
      .knex('webhook_targets')
      .where({ id: targetId })
      .update({ open_since: db.knex.raw(`now() - interval '2 minutes'`) });
    await eventually(async () => breakerNotices().length === 2, { what: 'the second opening told' });
    expect(await mailsOf('webhook-breaker-open', ['oncall@example.com'])).toHaveLength(2);
  }, 60_000);
});

describe('the operator webhook outbox', () => {
  it('tries a failed operator webhook again after its backoff, then delivers it; one without a webhook any more is given up', async () => {
    let status = 500;
    const operator = await target(() => ({ status }));
    const partyId = await partyWithSettings(null, operator.url);
    // written not yet due; the dispatcher's notifier (every 200 ms) sends it once it is made due
    const [row] = await db
      .knex('operator_notifications')
      .insert({
        party_id: partyId,
        kind: 'breaker-open',
        payload: { type: 'breaker-open', partyId },
        url: operator.url,
        next_attempt_at: db.knex.raw(`now() + interval '1 hour'`),
      })
      .returning('id');
    const id = Number((row as { id: string }).id);
    const rowOf = () => db.knex('operator_notifications').where({ id }).first();
    await db.knex('operator_notifications').where({ id }).update({ next_attempt_at: db.knex.fn.now() });
    await eventually(async () => (await rowOf()).last_status === 500, { what: 'the first try' });
    const failed = await rowOf();
    expect(failed).toMatchObject({
      attempts: 1,
      last_status: 500,
      last_error: 'status',
      delivered_at: null,
      failed_at: null,
    });
    // due again after about 30 s, not before
    const wait = failed.next_attempt_at.getTime() - Date.now();
    expect(wait).toBeGreaterThan(20_000);
    expect(wait).toBeLessThan(40_000);

    status = 204;
    await db.knex('operator_notifications').where({ id }).update({ next_attempt_at: db.knex.fn.now() });
    await eventually(async () => (await rowOf()).delivered_at !== null, { what: 'the second try' });
    expect(await rowOf()).toMatchObject({ attempts: 2, last_status: 204, last_error: null, failed_at: null });
    expect(operator.requests.filter((r) => r.headers['webhook-id'] === `opn_${id}`)).toHaveLength(2);

    // the party removes its operator webhook: what was still due is given up, not sent
    const [late] = await db
      .knex('operator_notifications')
      .insert({ party_id: partyId, kind: 'breaker-open', payload: { partyId }, url: operator.url })
      .returning('id');
    await db
      .knex('webhook_notification_settings')
      .where({ party_id: partyId })
      .update({ webhook_url: null, webhook_secret: null });
    const lateId = Number((late as { id: string }).id);
    await eventually(
      async () => (await db.knex('operator_notifications').where({ id: lateId }).first()).failed_at !== null,
      { what: 'the late notification given up' },
    );
    expect(await db.knex('operator_notifications').where({ id: lateId }).first()).toMatchObject({
      last_error: 'the party has no operator webhook now',
      delivered_at: null,
    });
    expect(operator.requests.filter((r) => r.headers['webhook-id'] === `opn_${lateId}`)).toHaveLength(0);
  });
});
