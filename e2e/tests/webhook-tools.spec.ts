import { expect, signIn, snap, SUCCESSFUL, test } from '../fixtures/test';

test('Resend delivers a Successful webhook’s body again as a new webhook, and the audit trail names it', async ({
  page,
  api,
  target,
}, testInfo) => {
  const {
    registrationId,
    webhooks: [original],
  } = await api.endedWebhooks(target, { status: 200, name: 'Resent House' });

  await signIn(page, `/admin/webhooks/${original!.id}`);
  const state = page.getByRole('heading', { level: 1 }).getByTestId('webhook-state');
  await expect(state).toHaveText('Successful');
  const actions = page.getByRole('group', { name: 'Operator actions' });
  await actions.getByRole('button', { name: 'Resend', exact: true }).click();
  const dialog = page.getByRole('dialog', { name: `Resend webhook ${original!.id}?` });
  await expect(dialog).toContainText('A new webhook delivers the same body again');
  await snap(page, testInfo, 'resend-confirmation');
  await dialog.getByRole('button', { name: 'Resend webhook' }).click();

  const toast = page.getByTestId('toast-success');
  await expect(toast).toContainText(new RegExp(`^Webhook ${original!.id} resent as webhook \\d+\\.`));
  const resentId = Number(/as webhook (\d+)/.exec((await toast.textContent())!)![1]);
  await expect(page).toHaveURL(new RegExp(`/admin/webhooks/${resentId}$`));
  await expect(state).toHaveText('Successful');
  await expect(page.getByTestId('webhook-last-action')).toContainText('resent by');
  await snap(page, testInfo, 'webhook-resent');

  const [first] = await target.deliveriesOf(original!.id);
  const deliveries = await target.deliveriesOf(resentId);
  expect(deliveries).toHaveLength(1);
  expect(deliveries[0]!.rawBody).toBe(first!.rawBody);

  await page.goto(`/admin/operator-actions?registrationId=${registrationId}`);
  const entry = page.locator('[data-testid="audit-entry"][data-action="webhook.resend"]');
  await expect(entry).toHaveCount(1);
  await expect(entry.getByTestId('audit-action')).toHaveText('Resend webhook');
  await expect(entry.getByTestId('audit-filter')).toContainText(`resentAs ${resentId}`);
});

test('an attempt’s full record shows the request as sent and the answer, headers and bodies', async ({
  page,
  api,
  target,
}, testInfo) => {
  const {
    webhooks: [webhook],
  } = await api.endedWebhooks(target, { status: 200, name: 'Recorded House' });
  const [delivered] = await target.deliveriesOf(webhook!.id);

  await signIn(page, `/admin/webhooks/${webhook!.id}`);
  const attempt = page.getByTestId('attempt');
  await expect(attempt).toHaveCount(1);
  await attempt.getByTestId('attempt-record').getByText('Full record').click();

  const request = attempt.getByTestId('attempt-request');
  await expect(request).toContainText(`POST ${target.url}`);
  const requestHeaders = request.getByRole('table', { name: 'Request headers' });
  await expect(requestHeaders.getByRole('row', { name: /webhook-id/ })).toContainText(String(webhook!.id));
  await expect(requestHeaders.getByRole('row', { name: /webhook-signature/ })).toContainText('v1,[redacted]');
  await expect(requestHeaders.getByRole('row', { name: /webhook-timestamp/ })).toContainText(
    delivered!.headers['webhook-timestamp']!,
  );
  const body = JSON.parse((await request.getByTestId('attempt-request-body').textContent())!) as unknown;
  expect(body).toEqual(delivered!.body);

  const response = attempt.getByTestId('attempt-response');
  await expect(response.getByRole('heading')).toContainText('200');
  await expect(
    response.getByRole('table', { name: 'Response headers' }).getByRole('row', { name: /content-type/ }),
  ).toContainText('application/json');
  await expect(response.getByTestId('attempt-response-body')).toContainText('"received":true');
  await snap(page, testInfo, 'attempt-full-record');
});

test('the search box finds webhooks by a string in their payload and by id, kept in the address', async ({
  page,
  api,
  target,
}, testInfo) => {
  await target.behave({ status: 200 });
  const registrationId = await api.createRegistration(target.url, [{ entityName: 'Property', type: 1 }]);
  const stamp = Date.now();
  await api.createProperty(`Plain House ${stamp}`);
  const needle = await api.createProperty(`Haus Mietminderung-${stamp}`);
  await api.createProperty(`Other House ${stamp}`);
  await api.waitForStates(registrationId, Array(3).fill(SUCCESSFUL));
  const found = (await api.webhooksOf(registrationId)).find((w) => w.entityId === needle.id)!;
  const other = (await api.webhooksOf(registrationId)).find((w) => w.entityId !== needle.id)!;

  await signIn(page, `/admin/webhooks?registrationId=${registrationId}`);
  const rows = page.getByTestId('webhook-row');
  await expect(rows).toHaveCount(3);
  const search = page.getByRole('searchbox', { name: 'Search' });
  await search.fill(`mietminderung-${stamp}`);
  await search.press('Enter');
  await expect(page).toHaveURL(new RegExp(`[?&]q=mietminderung-${stamp}`));
  await expect(rows).toHaveCount(1);
  await expect(rows.getByRole('link', { name: `Webhook ${found.id}` })).toBeVisible();
  // a search cannot be acted on as "all matching": only the rows
  await expect(page.getByTestId('bulk-search-note')).toBeVisible();
  await snap(page, testInfo, 'webhooks-search');

  // a link to the search shows the same; an id finds its webhook
  await page.goto(`/admin/webhooks?registrationId=${registrationId}&q=${other.id}`);
  await expect(page.getByRole('searchbox', { name: 'Search' })).toHaveValue(String(other.id));
  await expect(rows.getByRole('link', { name: `Webhook ${other.id}` })).toBeVisible();
  // too short to search: said, not silently ignored
  await page.goto(`/admin/webhooks?registrationId=${registrationId}&q=ab`);
  await expect(
    page.getByText('q "ab" (a search is an id, or 3 to 200 characters of payload text)'),
  ).toBeVisible();
});
