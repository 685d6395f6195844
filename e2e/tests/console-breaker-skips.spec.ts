import { metricSum } from '@platform/testkit';
import {
  ApiClient,
  expect,
  OTHER_MANAGER,
  seriesTableTotals,
  signIn,
  snap,
  STACK,
  test,
  type WebhookSummary,
} from '../fixtures/test';

// Issue 30 item 2: with the breaker open on one registration, every figure the console shows
// (overview, the registration's health and series, the registrations and webhooks lists) and the
// dispatcher's metrics count the requests the receiver really got apart from the attempts the
// breaker skipped, and a Failed row whose last attempt was a skip shows the last real answer.

/** The attempts of the retry schedule (global-setup.ts). */
const ATTEMPTS = 7;

interface AttemptWindow {
  attempts: number;
  requests: number;
  skipped: number;
  successes: number;
}

interface StatsRead extends AttemptWindow {
  failures: number;
  skippedByReason: { reason: string; count: number }[];
}

interface SeriesRead {
  points: {
    requests: number;
    successes: number;
    targetFailures: number;
    otherFailures: number;
    skipped: number;
  }[];
}

interface ListedWebhook extends WebhookSummary {
  lastStatusCode: number | null;
  lastErrorKind: string | null;
  lastRequest: { statusCode: number | null; errorKind: string | null } | null;
}

/** The console's number format (`formatCount`). */
const count = (value: number) => new Intl.NumberFormat('en-US').format(value);

async function scrapeMetrics(): Promise<string> {
  const response = await fetch(`${STACK.dispatcherUrl}/metrics`);
  expect(response.status).toBe(200);
  return response.text();
}

/** The series' sums: requests, delivered, target failures, refused, skipped (the table's columns). */
function seriesTotals(series: SeriesRead): number[] {
  return series.points.reduce(
    (sum, p) => [
      sum[0]! + p.requests,
      sum[1]! + p.successes,
      sum[2]! + p.targetFailures,
      sum[3]! + p.otherFailures,
      sum[4]! + p.skipped,
    ],
    [0, 0, 0, 0, 0],
  );
}

test('with the breaker open, every screen counts the receiver’s requests apart from the skips', async ({
  page,
  target,
  baseURL,
}, testInfo) => {
  // another party than every other spec's, so its overview holds this test's attempts alone
  const api = await ApiClient.login(baseURL!, OTHER_MANAGER.email, OTHER_MANAGER.password);
  try {
    const statsBefore = await api.request<StatsRead>('GET', '/api/webhook-stats');
    const metricsBefore = await scrapeMetrics();

    // enough failing webhooks that their attempts pass the breaker's threshold (ungrouped: they
    // fail side by side, and the breaker opens while they still have attempts to make)
    const webhookCount = Math.ceil(STACK.breakerFailures / ATTEMPTS) + 2;
    // skips count as attempts: every webhook ends Failed on schedule, seven attempts each
    const { registrationId } = await api.endedWebhooks(target, {
      status: 500,
      count: webhookCount,
      name: 'Breaker House',
    });

    // the receiver's own count; the rest of the attempts asked it nothing
    const deliveries = await target.deliveries();
    const received = deliveries.length;
    const attempts = webhookCount * ATTEMPTS;
    const skipped = attempts - received;
    expect(deliveries.every((d) => d.answeredStatus === 500)).toBe(true);
    expect(received).toBeGreaterThanOrEqual(STACK.breakerFailures);
    expect(skipped).toBeGreaterThan(0);

    // the API's figures: the overview's, the registration's health and series
    const stats = await api.request<StatsRead>('GET', '/api/webhook-stats');
    expect(stats.requests - statsBefore.requests).toBe(received);
    expect(stats.skipped - statsBefore.skipped).toBe(skipped);
    expect(stats.attempts - statsBefore.attempts).toBe(attempts);
    expect(stats.failures - statsBefore.failures).toBe(received);
    const circuitOpen = (s: StatsRead) =>
      s.skippedByReason.find((r) => r.reason === 'circuit-open')?.count ?? 0;
    expect(circuitOpen(stats) - circuitOpen(statsBefore)).toBe(skipped);
    const health = await api.request<{ lastHour: AttemptWindow; lastDay: AttemptWindow }>(
      'GET',
      `/api/webhook-registrations/${registrationId}/health`,
    );
    for (const window of [health.lastHour, health.lastDay]) {
      expect(window).toMatchObject({ attempts, requests: received, skipped, successes: 0 });
    }
    const series = await api.request<SeriesRead>(
      'GET',
      `/api/webhook-stats/series?registrationId=${registrationId}`,
    );
    expect(seriesTotals(series)).toEqual([received, 0, received, 0, skipped]);
    const partySeries = seriesTotals(await api.request<SeriesRead>('GET', '/api/webhook-stats/series'));

    // the dispatcher's Prometheus counters: requests only, and the skips by reason
    const metricsAfter = await scrapeMetrics();
    const delta = (name: string, labels = '') =>
      metricSum(metricsAfter, name, labels) - metricSum(metricsBefore, name, labels);
    expect(delta('dispatcher_deliveries_total')).toBe(received);
    expect(delta('dispatcher_deliveries_total', 'outcome="status"')).toBe(received);
    expect(delta('dispatcher_attempt_duration_seconds_count')).toBe(received);
    expect(delta('dispatcher_skipped_attempts_total', 'reason="circuit-open"')).toBe(skipped);
    expect(delta('dispatcher_skipped_attempts_total')).toBe(skipped);

    // the overview: requests and skips apart, as the API counted them
    await signIn(page, '/admin/', OTHER_MANAGER);
    await expect(page.getByTestId('metric-requests-sent')).toHaveText(count(stats.requests));
    await expect(page.getByTestId('metric-skipped')).toHaveText(count(stats.skipped));
    await expect(page.getByTestId('metric-requests')).toContainText(
      `Skipped, no request sent: ${count(circuitOpen(stats))} circuit-open`,
    );
    await expect(page.getByTestId('metric-success-rate')).toContainText(
      `${count(stats.requests - stats.failures)} of ${count(stats.requests)} requests`,
    );
    await expect(page.getByTestId('attempts-chart')).toContainText(
      `${count(stats.requests)} requests in the last 60 minutes, ${count(stats.failures)} failed`,
    );
    await expect(page.getByTestId('attempts-chart')).toContainText(
      `${count(stats.skipped)} attempts skipped (no request sent).`,
    );
    await expect(page.getByTestId('delivery-series').getByTestId('series-summary')).toContainText(
      `${count(partySeries[0]!)} requests in the last 24 hours`,
    );
    await expect(page.getByTestId('delivery-series').getByTestId('series-summary')).toContainText(
      `${count(partySeries[4]!)} attempts skipped (no request sent).`,
    );
    await snap(page, testInfo, 'breaker-skips-overview');

    // the registrations list: the health badge's figures
    await page.goto('/admin/registrations');
    const row = page
      .getByTestId('registrations-table')
      .getByRole('row')
      .filter({ has: page.getByRole('link', { name: `Registration ${registrationId}`, exact: true }) });
    await expect(row.getByTestId('registration-health').locator('.badge')).toHaveAttribute(
      'title',
      `Last hour: 0 of ${count(received)} requests succeeded. ${count(skipped)} attempts skipped (no request sent).`,
    );

    // the registration's page: its health (breaker open) and its series, figure by figure
    await page.goto(`/admin/registrations/${registrationId}`);
    await expect(page.getByTestId('breaker-state')).toContainText('Open');
    for (const window of ['health-last-hour', 'health-last-day']) {
      await expect(page.getByTestId(window)).toContainText(
        `0 of ${count(received)} requests · ${count(skipped)} skipped (no request sent)`,
      );
    }
    const registrationSeries = page.getByTestId('delivery-series');
    await expect(registrationSeries.getByTestId('series-summary')).toContainText(
      `${count(received)} requests in the last 24 hours: 0 delivered, ${count(received)} target failures, 0 refused. ` +
        `${count(skipped)} attempts skipped (no request sent).`,
    );
    expect(await seriesTableTotals(registrationSeries)).toEqual([received, 0, received, 0, skipped]);
    await snap(page, testInfo, 'breaker-skips-registration');

    // the webhooks list: a Failed row whose last attempt was a skip shows the last real answer
    const listed = (
      await api.request<{ items: ListedWebhook[] }>(
        'GET',
        `/api/webhooks?registrationId=${registrationId}&PageSize=100`,
      )
    ).items;
    const skippedLast = listed.filter((w) => w.lastErrorKind === 'circuit-open');
    expect(skippedLast.length).toBeGreaterThan(0);
    for (const webhook of skippedLast) expect(webhook.lastRequest).toMatchObject({ statusCode: 500 });
    await page.goto(`/admin/webhooks?registrationId=${registrationId}`);
    const rows = page.getByTestId('webhook-row');
    await expect(rows).toHaveCount(webhookCount);
    const lastError = (kind: string) => page.getByTestId('webhook-last-error').filter({ hasText: kind });
    const skippedRows = rows.filter({ has: lastError('circuit-open') });
    await expect(skippedRows).toHaveCount(skippedLast.length);
    await expect(skippedRows.getByTestId('webhook-last-status')).toHaveText(
      Array(skippedLast.length).fill('—'),
    );
    await expect(skippedRows.getByTestId('webhook-last-request')).toHaveText(
      Array(skippedLast.length).fill('last answer: HTTP 500'),
    );
    // a row whose last attempt was a request shows its answer and nothing beside it
    const requestedRows = rows.filter({ has: lastError('status') });
    await expect(requestedRows).toHaveCount(webhookCount - skippedLast.length);
    await expect(requestedRows.getByTestId('webhook-last-request')).toHaveCount(0);
    await snap(page, testInfo, 'breaker-skips-webhooks');

    // one of those webhooks: seven attempts, of them the receiver's requests and the skips
    const webhook = skippedLast[0]!;
    const requestsOfWebhook = deliveries.filter((d) => d.headers['webhook-id'] === String(webhook.id)).length;
    await page.goto(`/admin/webhooks/${webhook.id}`);
    await expect(page.getByTestId('attempt')).toHaveCount(ATTEMPTS);
    await expect(page.getByTestId('attempt-status').filter({ hasText: /^500$/ })).toHaveCount(
      requestsOfWebhook,
    );
    await expect(page.getByTestId('attempt-skip-note')).toHaveCount(ATTEMPTS - requestsOfWebhook);
  } finally {
    await api.cleanUp();
  }
});
