import { WebhookState, type WebhookStatsSeriesRead } from '@platform/shared';
import {
  propertyChange,
  seedChange,
  seedRegistration,
  startDispatcher,
  startTestTarget,
  waitForWebhook,
} from '@platform/testkit';
import { describe, expect, it } from 'vitest';
import { expectProblem, readJson } from '../../../tests/support/http';
import { useTestApi } from '../../../tests/support/api';

// The time series reads the per-minute figures the dispatcher writes; its sums must be what the
// receivers got: requests, successes, failures by kind, and the skips of an open breaker apart.

const { Successful, Failed } = WebhookState;

const { api, world } = useTestApi({ world: true, truncateWebhooks: true });

const sum = (
  series: WebhookStatsSeriesRead,
  key: 'requests' | 'successes' | 'targetFailures' | 'otherFailures' | 'skipped',
) => series.points.reduce((total, point) => total + point[key], 0);

describe('GET /api/webhook-stats/series', () => {
  it('sums to what the receivers got, per registration and overall, failures split by kind', async () => {
    const ok = await startTestTarget(() => ({ status: 200, delayMs: 5 }));
    const refusing = await startTestTarget(() => ({ status: 404 }));
    const down = await startTestTarget(() => ({ status: 503 }));
    const okRegistration = await seedRegistration(api.db.knex, { partyId: world.pmc.id, targetUrl: ok.url });
    const refusingRegistration = await seedRegistration(api.db.knex, {
      partyId: world.pmc.id,
      targetUrl: refusing.url,
    });
    const downRegistration = await seedRegistration(api.db.knex, {
      partyId: world.pmc.id,
      targetUrl: down.url,
    });
    const dispatcher = await startDispatcher(api.db.url, {
      WEBHOOK_RETRY_SCHEDULE: '0s,200ms,200ms,200ms',
      DISPATCHER_BREAKER_FAILURES: '2',
      DISPATCHER_BREAKER_COOLDOWN: '1h',
      DISPATCHER_POLL_INTERVAL: '200ms',
    });
    try {
      const ids: number[] = [];
      for (let i = 1; i <= 3; i++)
        ids.push(...(await seedChange(api.db.knex, propertyChange(world.pmc.id, i))));
      for (const id of ids) {
        const { registration_id: registrationId } = await api.db
          .knex('webhooks')
          .where({ id })
          .first<{ registration_id: number }>('registration_id');
        await waitForWebhook(api.db.knex, id, registrationId === okRegistration.id ? Successful : Failed, {
          attempts: registrationId === okRegistration.id ? 1 : 4,
          timeoutMs: 30_000,
        });
      }
    } finally {
      expect(await dispatcher.stop()).toBe(0);
      await Promise.all([ok.close(), refusing.close(), down.close()]);
    }

    const read = async (query: string) =>
      readJson<WebhookStatsSeriesRead>(
        await api.fetch(`/api/webhook-stats/series?${query}`, { token: world.pmc.full.token }),
      );
    const one = await read(`registrationId=${okRegistration.id}`);
    expect(one).toMatchObject({ stepMinutes: 15, registrationId: okRegistration.id });
    // the last 24 hours in whole steps of 15 minutes: the step now is in it, partly
    expect(one.points).toHaveLength((Date.parse(one.to) - Date.parse(one.from)) / 900_000);
    expect(one.points.length).toBeGreaterThanOrEqual(96);
    expect(one.points.length).toBeLessThanOrEqual(97);
    expect(sum(one, 'requests')).toBe(ok.requests.length);
    expect(sum(one, 'successes')).toBe(ok.requests.length);
    expect(one.points.find((point) => point.requests > 0)!.p50Ms).toBeGreaterThanOrEqual(5);

    const refused = await read(
      `registrationId=${refusingRegistration.id}&from=${new Date(Date.now() - 3_600_000).toISOString()}`,
    );
    expect(refused.stepMinutes).toBe(1);
    expect(sum(refused, 'requests')).toBe(refusing.requests.length);
    expect(sum(refused, 'otherFailures')).toBe(refusing.requests.length);
    expect(sum(refused, 'targetFailures')).toBe(0);

    // the breaker opened after two 503s: the rest of the attempts asked nobody
    const downSeries = await read(`registrationId=${downRegistration.id}`);
    expect(sum(downSeries, 'requests')).toBe(down.requests.length);
    expect(sum(downSeries, 'targetFailures')).toBe(down.requests.length);
    expect(sum(downSeries, 'skipped')).toBe(3 * 4 - down.requests.length);
    expect(sum(downSeries, 'skipped')).toBeGreaterThan(0);

    const all = await read('');
    expect(sum(all, 'requests')).toBe(ok.requests.length + refusing.requests.length + down.requests.length);

    // another party sees none of it, and cannot name the registration
    const other = await readJson<WebhookStatsSeriesRead>(
      await api.fetch('/api/webhook-stats/series', { token: world.otherPmc.full.token }),
    );
    expect(sum(other, 'requests') + sum(other, 'skipped')).toBe(0);
    const hidden = await api.fetch(`/api/webhook-stats/series?registrationId=${okRegistration.id}`, {
      token: world.otherPmc.full.token,
    });
    expect(hidden.status).toBe(404);
  });

  it('names what is wrong with a range', async () => {
    const token = world.pmc.full.token;
    const now = Date.now();
    const at = (ms: number) => new Date(ms).toISOString();
    for (const [query, field, message] of [
      ['from=yesterday', 'from', /ISO 8601/],
      [`from=${at(now)}&to=${at(now - 60_000)}`, 'to', /after from/],
      [`from=${at(now - 49 * 3_600_000)}`, 'from', /at most 48 hours/],
      ['registrationId=abc', 'registrationId', /whole number/],
    ] as const) {
      const problem = await expectProblem(
        await api.fetch(`/api/webhook-stats/series?${query}`, { token }),
        400,
      );
      expect(problem.errors?.[field]?.join(' '), query).toMatch(message);
    }
  });
});
