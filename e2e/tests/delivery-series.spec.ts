import { expect, seriesTableTotals, signInAndRegister, snap, test } from '../fixtures/test';

test('deliveries over time: a registration’s requests by outcome over a chosen range, as the receiver counted them', async ({
  page,
  api,
  target,
}, testInfo) => {
  const registration = await signInAndRegister({ page, api, target }, testInfo, ['Property Created']);
  // two delivered, then one refused with a 404 (a 4xx fails at once: one request each try)
  await api.createProperty(`Series House A ${Date.now()}`);
  await api.createProperty(`Series House B ${Date.now()}`);
  await expect.poll(async () => (await target.deliveries()).length, { timeout: 60_000 }).toBe(2);
  await target.behave({ status: 503 });
  await api.createProperty(`Series House C ${Date.now()}`);
  // 7 tries of the spec's schedule (fast in e2e), each a request answered 503
  await expect.poll(async () => (await target.deliveries()).length, { timeout: 60_000 }).toBe(9);

  await page.getByRole('link', { name: `Go to registration ${registration.id}` }).click();
  const series = page.getByTestId('delivery-series');
  await expect(series.getByTestId('series-summary')).toContainText(
    '9 requests in the last 24 hours: 2 delivered, 7 target failures, 0 refused.',
  );
  await expect(series.getByTestId('series-summary')).toContainText('One bar per 15 min.');
  // the chosen range is in the URL and changes the step
  await series.getByRole('link', { name: '1h' }).click();
  await expect(page).toHaveURL(/[?&]range=1h/);
  await expect(series.getByTestId('series-summary')).toContainText('in the last 1 hour');
  await expect(series.getByTestId('series-summary')).toContainText('One bar per 1 min.');
  await expect(series.getByRole('link', { name: '1h' })).toHaveAttribute('aria-current', 'true');
  // the same figures as a table, one row per step with attempts
  expect(await seriesTableTotals(series)).toEqual([9, 2, 7, 0, 0]);
  await snap(page, testInfo, 'delivery-series');

  // a link with a range the console does not offer says so and shows the default
  await page.goto(page.url().replace('range=1h', 'range=7d'));
  await expect(page.getByTestId('series-range-notice')).toContainText('“7d”');
  await expect(series.getByTestId('series-summary')).toContainText('in the last 24 hours');

  // the overview shows the same engine-wide
  await page.getByRole('link', { name: 'Overview' }).first().click();
  await expect(page.getByTestId('delivery-series').getByTestId('series-chart')).toBeVisible();
});
