import { expect, signInAndRegister, snap, test } from '../fixtures/test';

const PROPERTY_CREATED = { entityName: 'Property', type: 1 };

test('a registration page names its endpoint, who shares it (same party and URL), its hold and its rate limit', async ({
  page,
  api,
  target,
}, testInfo) => {
  const registration = await signInAndRegister({ page, api, target }, testInfo, ['Property Created']);
  // the same party's second registration of the URL shares the endpoint; another path does not
  const twin = await api.createRegistration(target.url, [PROPERTY_CREATED]);
  const elsewhere = await api.createRegistration(target.sibling('elsewhere').url, [PROPERTY_CREATED]);
  await api.request('POST', `/api/webhook-registrations/${twin}/pause`);

  await page.getByRole('link', { name: `Go to registration ${registration.id}` }).click();
  const panel = page.getByTestId('health-panel');
  await expect(panel.getByTestId('health-endpoint')).toContainText(target.url);
  await expect(panel.getByTestId('endpoint-shared-with')).toHaveText(
    `Shared with Registration ${twin} (Paused) (same party and URL: one breaker, one hold)`,
  );
  await expect(panel.getByTestId('breaker-state')).toContainText('Closed');
  await expect(panel.getByTestId('health-hold')).toHaveText('Not held');
  await expect(panel.getByTestId('health-rate-limit')).toHaveText('No limit');
  await snap(page, testInfo, 'registration-endpoint-shared');

  // the link leads to the twin, which names the first
  await panel.getByRole('link', { name: `Registration ${twin}`, exact: true }).click();
  await expect(page.getByRole('heading', { level: 1 })).toContainText(`Registration ${twin}`);
  await expect(page.getByTestId('endpoint-shared-with')).toHaveText(
    `Shared with Registration ${registration.id} (same party and URL: one breaker, one hold)`,
  );

  await page.goto(page.url().replace(/\/registrations\/\d+$/, `/registrations/${elsewhere}`));
  await expect(page.getByTestId('endpoint-shared-with')).toHaveText('No other registration delivers to it.');
});

test('an operator changes a registration’s target URL and rate limit on its page, the API’s rules applied', async ({
  page,
  api,
  target,
}, testInfo) => {
  const registration = await signInAndRegister({ page, api, target }, testInfo, ['Property Created']);
  await page.getByRole('link', { name: `Go to registration ${registration.id}` }).click();
  await expect(page.getByTestId('registration-rate-limit')).toHaveText('No limit');

  await page.getByRole('button', { name: 'Edit URL and rate limit' }).click();
  const form = page.getByRole('form', { name: 'Delivery settings' });
  await form.getByLabel('Rate limit (optional)').fill('0');
  await form.getByRole('button', { name: 'Save' }).click();
  await expect(form).toContainText('Enter a whole number of deliveries per second from 1 to 10000');

  const moved = target.sibling('moved').url;
  await form.getByLabel('Target URL').fill(moved);
  await expect(form).toContainText('Another URL is another endpoint');
  await form.getByLabel('Rate limit (optional)').fill('25');
  await form.getByRole('button', { name: 'Save' }).click();
  await expect(page.getByText(`Registration ${registration.id} saved.`)).toBeVisible();
  await expect(page.getByTestId('registration-target-url')).toHaveText(moved);
  await expect(page.getByTestId('registration-rate-limit')).toHaveText('At most 25/s');
  await expect(page.getByTestId('health-rate-limit')).toHaveText('At most 25/s');
  const read = await api.request<{ targetUrl: string; rateLimit: number | null }>(
    'GET',
    `/api/webhook-registrations/${registration.id}`,
  );
  expect(read).toMatchObject({ targetUrl: moved, rateLimit: 25 });

  // emptied, the limit is cleared
  await page.getByRole('button', { name: 'Edit URL and rate limit' }).click();
  await form.getByLabel('Rate limit (optional)').fill('');
  await form.getByRole('button', { name: 'Save' }).click();
  await expect(page.getByTestId('registration-rate-limit')).toHaveText('No limit');
});
