import { WebhookState, type WebhookOperationRead } from '@platform/shared';
import {
  eventually,
  propertyChange,
  seedChange,
  seedRegistration,
  startDispatcher,
  startTestTarget,
  type DispatcherProcess,
  type TestTarget,
} from '@platform/testkit';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildAccount, buildParty, login, useTestApi } from '../../../tests/support/api';

const { Successful, Failed, Pending } = WebhookState;

const { api } = useTestApi({ config: { WEBHOOK_OPERATION_BATCH: '2' } });
let token: string;
let partyId: number;
let target: TestTarget;
let dispatcher: DispatcherProcess;

beforeAll(async () => {
  partyId = (await buildParty(api.deps, { type: 2 })).id;
  token = (await login(api, (await buildAccount(api.deps, { partyId })).email)).accessToken;
  target = await startTestTarget(() => ({ status: 503 }));
  dispatcher = await startDispatcher(api.db.url, {
    WEBHOOK_RETRY_SCHEDULE: '0s,20ms,20ms,20ms,20ms,20ms,20ms',
    // the outage opens the target's breaker for longer than the test: only the recover's
    // half-open lets deliveries through
    DISPATCHER_BREAKER_FAILURES: '5',
    DISPATCHER_BREAKER_COOLDOWN: '10m',
  });
});
afterAll(async () => {
  expect(await dispatcher.stop()).toBe(0);
  await target.close();
});

const GROUPS = 5;
const PER_GROUP = 4;

describe('POST /api/webhook-registrations/{id}/recover with the real dispatcher', () => {
  it('delivers every group blocked by an outage again, each in its order, after the breaker opened', async () => {
    const since = new Date(Date.now() - 1000).toISOString();
    const { id: registrationId } = await seedRegistration(api.db.knex, {
      partyId,
      targetUrl: target.url,
      shouldGroup: true,
    });
    for (let change = 0; change < PER_GROUP; change++) {
      for (let entity = 1; entity <= GROUPS; entity++) {
        await seedChange(api.db.knex, propertyChange(partyId, entity, { change }));
      }
    }
    const webhooks = () =>
      api.db
        .knex('webhooks')
        .where({ registration_id: registrationId })
        .orderBy('id')
        .select('id', 'state', 'group_key', 'group_seq', 'attempt_count');

    // the outage: every group's head Failed (its 7 attempts spent, most of them circuit-open), the rest wait
    await eventually(
      async () => {
        const rows = await webhooks();
        const failed = rows.filter((row) => row.state === Failed).length;
        const pending = rows.filter((row) => row.state === Pending).length;
        return failed === GROUPS && pending === GROUPS * (PER_GROUP - 1);
      },
      { timeoutMs: 30_000, what: 'every head Failed', watch: dispatcher },
    );
    const breaker = await api.db
      .knex('webhook_targets as t')
      .join('webhook_registrations as r', 'r.target_id', 't.id')
      .where('r.id', registrationId)
      .first('t.breaker_state');
    expect(breaker.breaker_state).toBe('open');

    // the target is back; the operator recovers the window
    target.script = () => ({ status: 200 });
    const recoveredFrom = target.requests.length;
    const dry = await api.fetch(`/api/webhook-registrations/${registrationId}/recover`, {
      method: 'POST',
      token,
      json: { since, dryRun: true },
    });
    expect(dry.status).toBe(202);
    await api.deps.operations.idle();
    const dryRead = (await (
      await api.fetch(`/api/webhook-operations/${((await dry.json()) as WebhookOperationRead).id}`, { token })
    ).json()) as WebhookOperationRead;
    expect(dryRead).toMatchObject({
      action: 'recover',
      dryRun: true,
      state: 'done',
      total: GROUPS,
      changed: GROUPS,
    });
    expect((await webhooks()).filter((row) => row.state === Failed)).toHaveLength(GROUPS);

    const response = await api.fetch(`/api/webhook-registrations/${registrationId}/recover`, {
      method: 'POST',
      token,
      json: { since },
    });
    expect(response.status, await response.clone().text()).toBe(202);
    const started = (await response.json()) as WebhookOperationRead;
    expect(started).toMatchObject({ action: 'recover', freshSchedule: true, registrationId, total: GROUPS });

    await eventually(async () => (await webhooks()).every((row) => row.state === Successful), {
      timeoutMs: 30_000,
      what: 'every webhook delivered',
      watch: dispatcher,
    });
    const read = (await (
      await api.fetch(`/api/webhook-operations/${started.id}`, { token })
    ).json()) as WebhookOperationRead;
    expect(read).toMatchObject({ state: 'done', done: GROUPS, changed: GROUPS, skipped: {} });

    // every group arrived in its order, each webhook once, and each recovered head on a fresh schedule
    const rows = await webhooks();
    const groupOf = new Map(rows.map((row) => [String(row.id), row]));
    const arrived = new Map<string, number[]>();
    for (const request of target.requests.slice(recoveredFrom)) {
      const row = groupOf.get(request.webhookId!)!;
      arrived.set(row.group_key, [...(arrived.get(row.group_key) ?? []), row.group_seq]);
    }
    expect(arrived.size).toBe(GROUPS);
    for (const seqs of arrived.values()) expect(seqs).toEqual([1, 2, 3, 4]);
    expect(rows.filter((row) => row.group_seq === 1).map((row) => row.attempt_count)).toEqual(
      Array.from({ length: GROUPS }, () => 1),
    );
  });

  it('refuses a window that ends before it starts, and a registration the caller cannot see', async () => {
    const { id: registrationId } = await seedRegistration(api.db.knex, { partyId, targetUrl: target.url });
    const backwards = await api.fetch(`/api/webhook-registrations/${registrationId}/recover`, {
      method: 'POST',
      token,
      json: { since: '2026-02-01T00:00:00Z', until: '2026-01-01T00:00:00Z' },
    });
    expect(backwards.status).toBe(400);
    expect(await backwards.text()).toContain('until');
    const missing = await api.fetch(`/api/webhook-registrations/${registrationId}/recover`, {
      method: 'POST',
      token,
      json: {},
    });
    expect(missing.status).toBe(400);
    expect(await missing.text()).toContain('since');
    const other = await buildParty(api.deps, { type: 2 });
    const otherToken = (await login(api, (await buildAccount(api.deps, { partyId: other.id })).email))
      .accessToken;
    const hidden = await api.fetch(`/api/webhook-registrations/${registrationId}/recover`, {
      method: 'POST',
      token: otherToken,
      json: { since: '2026-01-01T00:00:00Z' },
    });
    expect(hidden.status).toBe(404);
  });
});
