import { WebhookState, type WebhookStatsRead } from '@platform/shared';
import { setWebhookState } from '@platform/testkit';
import { describe, expect, it } from 'vitest';
import { expectAccessRules, useTestApi } from '../../../tests/support/api';
import { createProperty, patchProperty, register, webhooksOf } from '../../../tests/support/webhooks';
import { readJson } from '../../../tests/support/http';

const { Created, Retrying, Successful, Failed, Aborted, Pending, Resolved } = WebhookState;

const { api, world } = useTestApi({ world: true, truncateWebhooks: true });

async function stats(token: string): Promise<WebhookStatsRead> {
  const response = await api.fetch('/api/webhook-stats', { token });
  return readJson<WebhookStatsRead>(response);
}

/** Records attempts of `webhookId` that ended `minutesAgo` before now, as the dispatcher would. */
async function attempt(
  webhookId: number,
  rows: { minutesAgo: number; durationMs: number; failed?: boolean }[],
): Promise<void> {
  let number = 1;
  for (const row of rows) {
    await api.db.knex.raw(
      `insert into webhook_attempts (webhook_id, number, started_at, duration_ms, status_code, error_kind, created)
       values (?, ?, now() - make_interval(mins => ?), ?, ?, ?, now() - make_interval(mins => ?))`,
      [
        webhookId,
        number++,
        row.minutesAgo,
        row.durationMs,
        row.failed ? 500 : 200,
        row.failed ? 'status' : null,
        row.minutesAgo,
      ],
    );
  }
}

const countOf = (figures: WebhookStatsRead, state: WebhookState) =>
  figures.countsByState.find((entry) => entry.state === state)?.count;

describe('GET /api/webhook-stats', () => {
  it('answers zeros and nulls without webhooks, with one entry per state and per minute', async () => {
    const figures = await stats(world.pmc.full.token);
    expect(figures.countsByState).toEqual(Object.values(WebhookState).map((state) => ({ state, count: 0 })));
    expect(figures.attemptsPerMinute).toHaveLength(60);
    expect(figures.attemptsPerMinute.every((m) => m.attempts === 0 && m.failures === 0)).toBe(true);
    expect(Date.parse(figures.window.to) - Date.parse(figures.window.from)).toBe(60 * 60_000);
    expect(Date.parse(figures.attemptsPerMinute[0]!.minute)).toBe(Date.parse(figures.window.from));
    expect(Date.parse(figures.generatedAt)).toBeGreaterThanOrEqual(
      Date.parse(figures.attemptsPerMinute[59]!.minute),
    );
    expect(figures).toMatchObject({
      attempts: 0,
      failures: 0,
      successRate: null,
      latencyMs: { p50: null, p90: null, p99: null },
      dueBacklog: 0,
      inFlight: 0,
      scheduled: 0,
      nextScheduledAt: null,
      oldestDueSeconds: null,
      blockedGroups: 0,
    });
  });

  it('counts states, the due backlog and its age, blocked groups, and the attempts of the last hour', async () => {
    const token = world.pmc.full.token;
    const ungrouped = await register(api, token);
    const grouped = await register(api, token, { shouldGroup: true });
    const propertyId = await createProperty(api, token);
    await patchProperty(api, token, propertyId, { notes: 'second change' });
    await patchProperty(api, token, propertyId, { notes: 'third change' });
    // ungrouped: three Created (due now); grouped: a Created head and two Pending
    const [u1, u2, u3] = (await webhooksOf(api, ungrouped.id)).map((w) => w.id);
    const [head] = (await webhooksOf(api, grouped.id)).map((w) => w.id);
    await setWebhookState(api.db.knex, u1!, Successful);
    await setWebhookState(api.db.knex, head!, Failed); // a Failed head: its group is blocked
    await api.db
      .knex('webhooks')
      .where({ id: u2 })
      .update({ next_attempt_at: api.db.knex.raw(`now() - interval '90 seconds'`) });
    // leased (due time in the future): not part of the backlog
    await api.db
      .knex('webhooks')
      .where({ id: u3 })
      .update({ next_attempt_at: api.db.knex.raw(`now() + interval '30 seconds'`) });

    await attempt(u1!, [{ minutesAgo: 0, durationMs: 10 }]);
    await attempt(head!, [
      { minutesAgo: 2, durationMs: 20, failed: true },
      { minutesAgo: 2, durationMs: 30, failed: true },
      { minutesAgo: 5, durationMs: 40 },
      { minutesAgo: 90, durationMs: 5000, failed: true }, // outside the window
    ]);

    const figures = await stats(token);
    expect(figures.countsByState).toEqual(
      [
        [Created, 2],
        [Retrying, 0],
        [Successful, 1],
        [Failed, 1],
        [Aborted, 0],
        [Pending, 2],
        [Resolved, 0],
      ].map(([state, count]) => ({ state, count })),
    );
    expect(countOf(figures, Pending)).toBe(2);
    expect(figures.dueBacklog).toBe(1);
    expect(figures.oldestDueSeconds).toBeGreaterThanOrEqual(89);
    expect(figures.oldestDueSeconds).toBeLessThan(150);
    expect(figures.blockedGroups).toBe(1);
    expect(figures.attempts).toBe(4);
    expect(figures.failures).toBe(2);
    expect(figures.successRate).toBe(0.5);
    expect(figures.latencyMs.p50).toBe(25);
    expect(figures.latencyMs.p99).toBeCloseTo(39.7, 1);
    // bucketed by the minute each attempt was recorded in, whichever minute the test runs in
    const expected = Array.from({ length: 60 }, () => ({ attempts: 0, failures: 0 }));
    for (const row of await api.db.knex('webhook_attempts').select('created', 'error_kind')) {
      const index = Math.floor(((row.created as Date).getTime() - Date.parse(figures.window.from)) / 60_000);
      if (index < 0 || index >= 60) continue;
      expected[index]!.attempts++;
      if (row.error_kind) expected[index]!.failures++;
    }
    expect(figures.attemptsPerMinute.map(({ attempts, failures }) => ({ attempts, failures }))).toEqual(
      expected,
    );
    expect(figures.attemptsPerMinute.reduce((sum, m) => sum + m.attempts, 0)).toBe(4);

    // a continue-after-fail group is not held by its Failed webhook
    const continuing = await register(api, token, { shouldGroup: true, shouldGroupContinueAfterFail: true });
    await patchProperty(api, token, propertyId, { notes: 'fourth change' });
    await setWebhookState(
      api.db.knex,
      (await webhooksOf(api, continuing.id)).map((w) => w.id),
      Failed,
    );
    expect((await stats(token)).blockedGroups).toBe(1);
  });

  it('tells the due backlog apart from webhooks in flight and those scheduled later', async () => {
    // the finding: "Due backlog 0 – Nothing waiting" while webhooks were Retrying minutes out
    const token = world.pmc.full.token;
    const registration = await register(api, token);
    const propertyId = await createProperty(api, token);
    for (const notes of ['2', '3', '4']) await patchProperty(api, token, propertyId, { notes });
    const [due, leased, backingOff, later] = (await webhooksOf(api, registration.id)).map((w) => w.id);
    const set = (id: number, values: Record<string, unknown>) =>
      api.db.knex('webhooks').where({ id }).update(values);
    await set(due!, { next_attempt_at: api.db.knex.raw(`now() - interval '5 seconds'`) });
    await set(leased!, {
      locked_by: 'dispatcher-1',
      next_attempt_at: api.db.knex.raw(`now() + interval '30 seconds'`),
    });
    await setWebhookState(api.db.knex, [backingOff!, later!], Retrying);
    await set(backingOff!, { next_attempt_at: api.db.knex.raw(`now() + interval '10 minutes'`) });
    await set(later!, { next_attempt_at: api.db.knex.raw(`now() + interval '1 hour'`) });

    const figures = await stats(token);
    expect(figures.dueBacklog).toBe(1);
    expect(figures.inFlight).toBe(1);
    expect(figures.scheduled).toBe(2);
    const next = (await api.db.knex('webhooks').where({ id: backingOff }).first('next_attempt_at'))
      .next_attempt_at as Date;
    expect(figures.nextScheduledAt).toBe(next.toISOString());
    expect(countOf(figures, Retrying)).toBe(2);
  });

  it('counts the due webhooks of paused and disabled registrations apart from the due backlog', async () => {
    // the finding: "Due now 1,293 · oldest due for 21 min" counted only a disabled registration's webhooks
    const token = world.pmc.full.token;
    const active = await register(api, token);
    const paused = await register(api, token, { targetUrl: 'https://paused.example.com/x' });
    const disabled = await register(api, token, { targetUrl: 'https://disabled.example.com/x' });
    await createProperty(api, token);
    await createProperty(api, token);
    await api.db.knex('webhook_registrations').where({ id: paused.id }).update({ status: 'paused' });
    await api.db
      .knex('webhook_registrations')
      .where({ id: disabled.id })
      .update({ status: 'disabled', disabled_reason: 'gone' });
    // everything due; the disabled registration's webhooks for 21 minutes, the active one's for 5 s
    await api.db
      .knex('webhooks')
      .whereIn('registration_id', [paused.id, disabled.id])
      .update({ next_attempt_at: api.db.knex.raw(`now() - interval '21 minutes'`) });
    await api.db
      .knex('webhooks')
      .where({ registration_id: active.id })
      .update({ next_attempt_at: api.db.knex.raw(`now() - interval '5 seconds'`) });

    const figures = await stats(token);
    expect(figures.dueBacklog).toBe(2);
    expect(figures.oldestDueSeconds).toBeGreaterThanOrEqual(5);
    expect(figures.oldestDueSeconds).toBeLessThan(60);
    expect(figures.dueHeld).toEqual({ paused: 2, disabled: 2 });

    await api.db.knex('webhook_registrations').where({ id: active.id }).update({ status: 'paused' });
    const allHeld = await stats(token);
    expect(allHeld).toMatchObject({
      dueBacklog: 0,
      oldestDueSeconds: null,
      dueHeld: { paused: 4, disabled: 2 },
    });
  });

  it('counts only the webhooks of the caller’s party; Admin counts every party', async () => {
    const mine = await register(api, world.pmc.full.token);
    const foreign = await register(api, world.otherPmc.full.token);
    await createProperty(api, world.pmc.full.token);
    await createProperty(api, world.otherPmc.full.token);
    await createProperty(api, world.otherPmc.full.token);
    const [foreignHook] = (await webhooksOf(api, foreign.id)).map((w) => w.id);
    await attempt(foreignHook!, [{ minutesAgo: 1, durationMs: 15, failed: true }]);

    const pmc = await stats(world.pmc.full.token);
    expect(countOf(pmc, Created)).toBe(1);
    expect(pmc.attempts).toBe(0);
    const other = await stats(world.otherPmc.full.token);
    expect(countOf(other, Created)).toBe(2);
    expect(other.attempts).toBe(1);
    const admin = await stats(world.admin.full.token);
    expect(countOf(admin, Created)).toBe(3);
    expect(admin.failures).toBe(1);
    expect((await webhooksOf(api, mine.id)).length).toBe(1);
  });

  it('applies the access rules of the other webhook reads (others than Admin and PMC: 403)', async () => {
    await expectAccessRules(api, world, {
      method: 'GET',
      path: '/api/webhook-stats',
      allow: [1, 2],
      permission: 'Webhook.Read',
    });
  });
});
