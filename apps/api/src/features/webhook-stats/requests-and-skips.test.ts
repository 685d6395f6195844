import {
  WebhookState,
  type Page,
  type WebhookRead,
  type WebhookRegistrationHealth,
  type WebhookStatsRead,
} from '@platform/shared';
import {
  metricSum,
  propertyChange,
  seedChange,
  seedRegistration,
  startDispatcher,
  startTestTarget,
  waitForWebhook,
} from '@platform/testkit';
import { describe, expect, it } from 'vitest';
import { readJson } from '../../../tests/support/http';
import { useTestApi } from '../../../tests/support/api';

// With the breaker open on one registration, every figure an operator reads (the overview's
// stats, the registration's health, the dispatcher's Prometheus metrics, the webhooks list)
// counts the requests the receiver really got apart from the attempts the breaker skipped.

const { Failed } = WebhookState;

const { api, world } = useTestApi({ world: true, truncateWebhooks: true });

describe('requests and skips, counted apart', () => {
  it('overview, health, metrics and the webhooks list agree with the receiver’s own count', async () => {
    // every request answered 500 after 40 ms; the breaker opens after 2 and stays open
    const target = await startTestTarget(() => ({ status: 500, delayMs: 40 }));
    const registration = await seedRegistration(api.db.knex, {
      partyId: world.pmc.id,
      targetUrl: target.url,
    });
    const dispatcher = await startDispatcher(api.db.url, {
      WEBHOOK_RETRY_SCHEDULE: '0s,300ms,300ms,300ms,300ms',
      DISPATCHER_BREAKER_FAILURES: '2',
      DISPATCHER_BREAKER_COOLDOWN: '1h',
      DISPATCHER_POLL_INTERVAL: '200ms',
    });
    let metrics: string;
    try {
      const ids: number[] = [];
      for (let i = 1; i <= 6; i++)
        ids.push(...(await seedChange(api.db.knex, propertyChange(world.pmc.id, i))));
      for (const id of ids) await waitForWebhook(api.db.knex, id, Failed, { attempts: 5, timeoutMs: 30_000 });
      metrics = await (await fetch(`http://127.0.0.1:${dispatcher.port}/metrics`)).text();
    } finally {
      expect(await dispatcher.stop()).toBe(0);
      await target.close();
    }

    const received = target.requests.length;
    const attempts = 6 * 5;
    const skipped = attempts - received;
    // the breaker did open: most attempts asked nobody
    expect(received).toBeGreaterThanOrEqual(2);
    expect(skipped).toBeGreaterThan(received);

    const stats = await readJson<WebhookStatsRead>(
      await api.fetch('/api/webhook-stats', { token: world.pmc.full.token }),
    );
    expect(stats).toMatchObject({
      attempts,
      requests: received,
      failures: received,
      skipped,
      skippedByReason: [{ reason: 'circuit-open', count: skipped }],
      successRate: 0,
    });
    expect(stats.attemptsPerMinute.reduce((sum, m) => sum + m.requests, 0)).toBe(received);
    expect(stats.attemptsPerMinute.reduce((sum, m) => sum + m.skipped, 0)).toBe(skipped);
    // latency of the requests only: every one took 40 ms or more, the zero-length skips are left out
    expect(stats.latencyMs.p50).toBeGreaterThanOrEqual(40);

    const health = await readJson<WebhookRegistrationHealth>(
      await api.fetch(`/api/webhook-registrations/${registration.id}/health`, {
        token: world.pmc.full.token,
      }),
    );
    for (const window of [health.lastHour, health.lastDay]) {
      expect(window).toMatchObject({ attempts, requests: received, skipped, successes: 0, successRate: 0 });
      expect(window.p50Ms).toBeGreaterThanOrEqual(40);
    }

    expect(metricSum(metrics, 'dispatcher_deliveries_total')).toBe(received);
    expect(metricSum(metrics, 'dispatcher_deliveries_total', 'outcome="status"')).toBe(received);
    expect(metricSum(metrics, 'dispatcher_skipped_attempts_total', 'reason="circuit-open"')).toBe(skipped);
    expect(metricSum(metrics, 'dispatcher_attempt_duration_seconds_count')).toBe(received);

    // a Failed webhook whose last attempt was skipped shows the target's last real answer beside it
    const list = await readJson<Page<WebhookRead>>(
      await api.fetch(`/api/webhooks?registrationId=${registration.id}&PageSize=100`, {
        token: world.pmc.full.token,
      }),
    );
    const skippedLast = list.items.filter((w) => w.lastErrorKind === 'circuit-open');
    expect(skippedLast.length).toBeGreaterThan(0);
    for (const webhook of skippedLast) {
      expect(webhook.lastStatusCode).toBeNull();
      if (webhook.lastRequest !== null) {
        expect(webhook.lastRequest).toMatchObject({ statusCode: 500, errorKind: 'status' });
        expect(Date.parse(webhook.lastRequest.at)).toBeLessThan(Date.parse(webhook.lastAttemptAt!));
      }
    }
    // every request the receiver got is some webhook's last real answer or an earlier one
    expect(skippedLast.some((w) => w.lastRequest?.statusCode === 500)).toBe(true);
  });
});
