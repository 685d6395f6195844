import { SHARED_WITH_SHOWN, WebhookState, type WebhookRegistrationHealth } from '@platform/shared';
import {
  bodyOf,
  propertyChange,
  seedChange,
  seedRegistration,
  setWebhookState,
  startDispatcher,
  startTestTarget,
  waitForWebhook,
} from '@platform/testkit';
import { describe, expect, it } from 'vitest';
import { expectProblem, readJson } from '../../../tests/support/http';
import { expectAccessRules, useTestApi } from '../../../tests/support/api';
import { register, webhooksOf, targetOf } from '../../../tests/support/webhooks';

const { Retrying, Successful, Failed, Pending } = WebhookState;

const { api, world } = useTestApi({ world: true, truncateWebhooks: true });

async function health(id: number, token = world.pmc.full.token): Promise<WebhookRegistrationHealth> {
  const response = await api.fetch(`/api/webhook-registrations/${id}/health`, { token });
  return readJson<WebhookRegistrationHealth>(response);
}

const iso = (value: Date | null) => value?.toISOString() ?? null;
const registrationRow = (id: number) => api.db.knex('webhook_registrations').where({ id }).first();

/** Writes per-minute figures as `webhooks_complete` would have, `minutesAgo` before now. */
async function stats(
  registrationId: number,
  rows: { minutesAgo: number; bucket: number; attempts: number; successes: number }[],
): Promise<void> {
  for (const row of rows) {
    await api.db.knex.raw(
      `insert into webhook_attempt_stats (registration_id, minute, bucket, attempts, successes)
       values (?, date_trunc('minute', now()) - make_interval(mins => ?), ?, ?, ?)`,
      [registrationId, row.minutesAgo, row.bucket, row.attempts, row.successes],
    );
  }
}

describe('GET /api/webhook-registrations/{id}/health', () => {
  it('answers zeros and nulls for a registration that never delivered', async () => {
    const created = await register(api, world.pmc.full.token);
    const emptyWindow = {
      attempts: 0,
      requests: 0,
      skipped: 0,
      successes: 0,
      successRate: null,
      p50Ms: null,
      p95Ms: null,
    };
    const endpoint = await targetOf(api, created.id).first();
    expect(await health(created.id)).toEqual({
      registrationId: created.id,
      status: 'active',
      disabledReason: null,
      statusChanged: null,
      endpoint: {
        id: endpoint.id,
        url: endpoint.url,
        origin: endpoint.origin,
        partyId: world.pmc.id,
        lastSuccessAt: null,
        lastFailureAt: null,
        sharedWith: [],
        sharedWithCount: 0,
      },
      target: endpoint.origin,
      breaker: { state: 'closed', openUntil: null, consecutiveFailures: 0 },
      holdUntil: null,
      rateLimit: null,
      lastHour: emptyWindow,
      lastDay: emptyWindow,
      dueCount: 0,
      dueCountCapped: false,
      oldestDueAt: null,
      inFlight: 0,
      lastSuccessAt: null,
      failingSince: null,
    });
  });

  it('matches the attempts the real dispatcher stored: counts, success rate and latency', async () => {
    // 20 successes and 5 failures (503), each answered after the delay its change carries
    const target = await startTestTarget((request) => {
      const entity = bodyOf(request).entity as { delayMs: number; status: number };
      return { status: entity.status, delayMs: entity.delayMs };
    });
    const registration = await seedRegistration(api.db.knex, {
      partyId: world.pmc.id,
      targetUrl: target.url,
    });
    const dispatcher = await startDispatcher(api.db.url, {
      // a failed webhook waits for its retry, and 5 failures in a row do not open the breaker
      WEBHOOK_RETRY_SCHEDULE: '0s,1h',
      DISPATCHER_BREAKER_FAILURES: '1000',
    });
    try {
      const answers = [
        ...Array.from({ length: 20 }, (_, i) => ({ status: 200, delayMs: 10 + i * 10 })),
        ...Array.from({ length: 5 }, (_, i) => ({ status: 503, delayMs: 120 + i * 40 })),
      ];
      const ids: number[] = [];
      for (const [index, answer] of answers.entries()) {
        ids.push(...(await seedChange(api.db.knex, propertyChange(world.pmc.id, index + 1, answer))));
      }
      for (const [index, id] of ids.entries()) {
        const succeeds = answers[index]!.status === 200;
        await waitForWebhook(api.db.knex, id, succeeds ? Successful : Retrying, { attempts: 1 });
      }
    } finally {
      expect(await dispatcher.stop()).toBe(0);
      await target.close();
    }

    const attempts: { duration_ms: number; error_kind: string | null }[] = await api.db
      .knex('webhook_attempts as a')
      .join('webhooks as w', 'w.id', 'a.webhook_id')
      .where('w.registration_id', registration.id)
      .select('a.duration_ms', 'a.error_kind');
    expect(attempts).toHaveLength(25);
    const successes = attempts.filter((a) => a.error_kind === null).length;
    expect(successes).toBe(20);
    // every attempt here sent a request, so each duration has its latency bucket
    const durations = attempts.map((a) => a.duration_ms).sort((a, b) => a - b);
    const rank = (p: number) => durations[Math.ceil(p * durations.length) - 1]!;

    const figures = await health(registration.id);
    for (const window of [figures.lastHour, figures.lastDay]) {
      expect(window).toMatchObject({ attempts: 25, successes: 20, successRate: 0.8 });
      // the upper bound of the 10 %-wide bucket holding the true percentile: never below it, and
      // at most 10 % above it (of 1 ms + the duration), give or take the rounding to 0.1 ms
      for (const [reported, truth] of [
        [window.p50Ms!, rank(0.5)],
        [window.p95Ms!, rank(0.95)],
      ] as const) {
        expect(reported).toBeGreaterThanOrEqual(truth - 0.05);
        expect(reported).toBeLessThanOrEqual(1.1 * (truth + 1) - 1 + 0.05);
      }
    }

    // the failed ones wait for their retry; nothing is held any more
    const failed = (await webhooksOf(api, registration.id)).filter((w) => w.state === Retrying);
    expect(failed).toHaveLength(5);
    const oldestFailed = await api.db
      .knex('webhooks')
      .whereIn(
        'id',
        failed.map((w) => w.id),
      )
      .min({ created: 'created' })
      .first();
    const row = await registrationRow(registration.id);
    const breaker = await targetOf(api, registration.id).first();
    expect(figures).toMatchObject({
      status: 'active',
      target: breaker.origin,
      breaker: {
        state: breaker.breaker_state,
        openUntil: iso(breaker.open_until),
        consecutiveFailures: breaker.consecutive_failures,
      },
      dueCount: 5,
      dueCountCapped: false,
      oldestDueAt: iso(oldestFailed!.created as Date),
      inFlight: 0,
      lastSuccessAt: iso(row.last_success_at),
      failingSince: iso(row.failing_since),
    });
    expect(figures.lastSuccessAt).not.toBeNull();
  });

  it('sums the minutes of each window, and reads latency percentiles from the requests sent only', async () => {
    const created = await register(api, world.pmc.full.token);
    const other = await register(api, world.pmc.full.token, { targetUrl: 'https://other.example.com/x' });
    await stats(created.id, [
      // the last hour: 30 circuit-open attempts (no request), 10 requests
      { minutesAgo: 0, bucket: -1, attempts: 30, successes: 0 },
      { minutesAgo: 0, bucket: 10, attempts: 4, successes: 4 },
      { minutesAgo: 30, bucket: 10, attempts: 2, successes: 2 },
      { minutesAgo: 30, bucket: 20, attempts: 3, successes: 2 },
      { minutesAgo: 58, bucket: 40, attempts: 1, successes: 0 },
      // earlier today: 10 more requests
      { minutesAgo: 300, bucket: 30, attempts: 10, successes: 10 },
      // yesterday: in neither window
      { minutesAgo: 25 * 60, bucket: 5, attempts: 100, successes: 100 },
    ]);
    // another registration's figures stay its own: attempts without a request only, earlier today
    await stats(other.id, [{ minutesAgo: 90, bucket: -1, attempts: 4, successes: 0 }]);

    const figures = await health(created.id);
    // p50 of 10 requests: the 5th is in bucket 10 (1.1^11 - 1 = 1.85 ms); p95: the 10th, in bucket 40
    // the success rate is of the requests: the skips asked the receiver nothing
    expect(figures.lastHour).toEqual({
      attempts: 40,
      requests: 10,
      skipped: 30,
      successes: 8,
      successRate: 8 / 10,
      p50Ms: 1.9,
      p95Ms: 48.8,
    });
    // of 20 requests, the 10th and the 19th are in bucket 30 (1.1^31 - 1 = 18.19 ms)
    expect(figures.lastDay).toEqual({
      attempts: 50,
      requests: 20,
      skipped: 30,
      successes: 18,
      successRate: 18 / 20,
      p50Ms: 18.2,
      p95Ms: 18.2,
    });

    expect(await health(other.id)).toMatchObject({
      lastHour: { attempts: 0, requests: 0, skipped: 0, successes: 0, successRate: null, p50Ms: null },
      lastDay: {
        attempts: 4,
        requests: 0,
        skipped: 4,
        successes: 0,
        successRate: null,
        p50Ms: null,
        p95Ms: null,
      },
    });
  });

  it('counts at most 10,000 awaiting webhooks and says when more are waiting', async () => {
    const created = await register(api, world.pmc.full.token);
    const [first] = await seedChange(api.db.knex, propertyChange(world.pmc.id, 1));
    const copy = (count: number) =>
      api.db.knex.raw(
        `insert into webhooks (registration_id, bucket, event_id, entity_change_id, state, next_attempt_at)
         select registration_id, bucket, event_id, entity_change_id, state, next_attempt_at
           from webhooks, generate_series(1, ?) where id = ?`,
        [count, first!],
      );
    await copy(9_999);
    expect(await health(created.id)).toMatchObject({ dueCount: 10_000, dueCountCapped: false });
    await copy(1);
    expect(await health(created.id)).toMatchObject({ dueCount: 10_000, dueCountCapped: true });
  });

  it('counts the awaiting webhooks, the oldest one, those held by a dispatcher, and shows the breaker and status', async () => {
    const token = world.pmc.full.token;
    const created = await register(api, token);
    const other = await register(api, world.otherPmc.full.token);
    const ids: number[] = [];
    for (let entityId = 1; entityId <= 8; entityId++) {
      ids.push(...(await seedChange(api.db.knex, propertyChange(world.pmc.id, entityId))));
    }
    await seedChange(api.db.knex, propertyChange(world.otherPmc.id, 99));
    expect(ids).toHaveLength(8);
    const [oldest, fresh, leased, leaseRanOut, retrying, pending, failed, successful] = ids.map(Number);
    const update = (id: number | undefined, fields: Record<string, unknown>) =>
      api.db.knex('webhooks').where({ id }).update(fields);
    await setWebhookState(api.db.knex, [leased!, leaseRanOut!, retrying!], Retrying);
    await setWebhookState(api.db.knex, pending!, Pending);
    await setWebhookState(api.db.knex, failed!, Failed);
    await setWebhookState(api.db.knex, successful!, Successful);
    // held: a Created and a Retrying webhook leased for another hour; a lease that ran out is not
    await update(fresh, { locked_by: 'd-1', next_attempt_at: new Date(Date.now() + 3_600_000) });
    await update(leased, { locked_by: 'd-1', next_attempt_at: new Date(Date.now() + 3_600_000) });
    await update(leaseRanOut, { locked_by: 'd-2', next_attempt_at: new Date(Date.now() - 3_600_000) });
    // the oldest awaiting one (the first written), and an older webhook that no longer waits
    await update(oldest, { created: new Date('2026-01-02T00:00:00Z') });
    await update(failed, { created: new Date('2026-01-01T00:00:00Z') });

    // in the future, whenever the test runs: a hold that has passed is not shown
    const openUntil = new Date(Math.ceil(Date.now() / 1000) * 1000 + 3_600_000);
    await targetOf(api, created.id).update({
      breaker_state: 'open',
      open_until: openUntil,
      consecutive_failures: 6,
      hold_until: openUntil,
    });
    const since = new Date('2026-11-01T00:00:00Z');
    const lastSuccess = new Date('2026-10-31T23:00:00Z');
    await api.db.knex('webhook_registrations').where({ id: created.id }).update({
      status: 'disabled',
      disabled_reason: 'failing',
      status_changed: since,
      failing_since: since,
      last_success_at: lastSuccess,
      rate_limit: 7,
    });

    expect(await health(created.id)).toMatchObject({
      status: 'disabled',
      disabledReason: 'failing',
      statusChanged: since.toISOString(),
      breaker: { state: 'open', openUntil: openUntil.toISOString(), consecutiveFailures: 6 },
      // the endpoint's Retry-After hold, and its rate limit (its one registration's)
      holdUntil: openUntil.toISOString(),
      rateLimit: 7,
      // Created (two), Retrying (three), Pending (one); not Failed or Successful
      dueCount: 6,
      oldestDueAt: '2026-01-02T00:00:00.000Z',
      // a lease not run out; the one that ran out is due again, not held
      inFlight: 2,
      lastSuccessAt: lastSuccess.toISOString(),
      failingSince: since.toISOString(),
    });
    expect((await health(other.id, world.otherPmc.full.token)).dueCount).toBe(1);
  });

  it('shows the endpoint’s hold, last success and failure, the rate limit, and the registrations sharing it', async () => {
    const token = world.pmc.full.token;
    const url = 'https://hooks.example.com/shared';
    const created = await register(api, token, { targetUrl: url });
    // the same party's URL written differently is the same endpoint; a paused one still shares it
    const twin = await register(api, token, { targetUrl: 'HTTPS://Hooks.Example.com:443/shared' });
    const paused = await register(api, token, { targetUrl: url });
    await api.db.knex('webhook_registrations').where({ id: paused.id }).update({ status: 'paused' });
    // not sharing: a deleted registration, another URL of the party, another party's same URL
    const deleted = await register(api, token, { targetUrl: url });
    await api.fetch(`/api/webhook-registrations/${deleted.id}`, { method: 'DELETE', token });
    const elsewhere = await register(api, token, { targetUrl: `${url}/other` });
    const foreign = await register(api, world.otherPmc.full.token, { targetUrl: url });

    // an hour ahead: a hold that has run out reads as null
    const holdUntil = new Date(Math.ceil(Date.now() / 1000) * 1000 + 3_600_000);
    const lastSuccess = new Date('2026-12-01T09:00:00Z');
    const lastFailure = new Date('2026-12-01T09:59:00Z');
    await targetOf(api, created.id).update({
      hold_until: holdUntil,
      last_success_at: lastSuccess,
      last_failure_at: lastFailure,
    });
    await api.db.knex('webhook_registrations').where({ id: created.id }).update({ rate_limit: 10 });

    const read = await health(created.id);
    expect(read).toMatchObject({
      holdUntil: holdUntil.toISOString(),
      rateLimit: 10,
      endpoint: {
        partyId: world.pmc.id,
        lastSuccessAt: lastSuccess.toISOString(),
        lastFailureAt: lastFailure.toISOString(),
        sharedWith: [
          { id: twin.id, status: 'active' },
          { id: paused.id, status: 'paused' },
        ],
        sharedWithCount: 2,
      },
    });
    // the twin reads the same endpoint, hold and rate limit in force (the lowest of the endpoint's
    // registrations'), and the others
    expect(await health(twin.id)).toMatchObject({
      holdUntil: holdUntil.toISOString(),
      rateLimit: 10,
      endpoint: {
        id: read.endpoint.id,
        sharedWith: [
          { id: created.id, status: 'active' },
          { id: paused.id, status: 'paused' },
        ],
      },
    });
    for (const alone of [elsewhere, foreign]) {
      const other = await health(alone.id, alone === foreign ? world.otherPmc.full.token : token);
      expect(other.endpoint.id).not.toBe(read.endpoint.id);
      expect(other.endpoint).toMatchObject({ sharedWith: [], sharedWithCount: 0 });
      expect(other.holdUntil).toBeNull();
    }
  });

  it('names at most SHARED_WITH_SHOWN of the registrations sharing an endpoint, and counts them all', async () => {
    const token = world.pmc.full.token;
    const url = 'https://hooks.example.com/crowded';
    const first = await register(api, token, { targetUrl: url });
    const others: number[] = [];
    for (let i = 0; i < SHARED_WITH_SHOWN + 2; i++)
      others.push((await register(api, token, { targetUrl: url })).id);
    const { endpoint } = await health(first.id);
    expect(endpoint.sharedWithCount).toBe(SHARED_WITH_SHOWN + 2);
    expect(endpoint.sharedWith.map((r) => r.id)).toEqual(others.slice(0, SHARED_WITH_SHOWN));
  });

  it('answers 404 for another party’s or a deleted registration, and needs Webhook.Read', async () => {
    const foreign = await register(api, world.otherPmc.full.token);
    const deleted = await register(api, world.pmc.full.token);
    await api.fetch(`/api/webhook-registrations/${deleted.id}`, {
      method: 'DELETE',
      token: world.pmc.full.token,
    });
    for (const id of [foreign.id, deleted.id, 999_999]) {
      await expectProblem(
        await api.fetch(`/api/webhook-registrations/${id}/health`, { token: world.pmc.full.token }),
        404,
      );
    }
    // an Admin sees every party's
    expect((await health(foreign.id, world.admin.full.token)).registrationId).toBe(foreign.id);

    await expectAccessRules(api, world, {
      method: 'GET',
      path: async (caller) =>
        caller.type === 1 || caller.type === 2
          ? `/api/webhook-registrations/${(await register(api, caller.full.token)).id}/health`
          : `/api/webhook-registrations/${foreign.id}/health`,
      allow: [1, 2],
      permission: 'Webhook.Read',
    });
  });
});
