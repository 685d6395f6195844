import { expect, FAILED, signIn, snap, SUCCESSFUL, test } from '../fixtures/test';

test('a selection holds the webhooks table still: auto-refresh pauses while rows are ticked, and says so', async ({
  page,
  api,
  target,
}, testInfo) => {
  const { registrationId } = await api.endedWebhooks(target, {
    status: 200,
    count: 3,
    name: 'Selected House',
  });

  await signIn(page, `/admin/webhooks?registrationId=${registrationId}`);
  const rows = page.getByTestId('webhook-row');
  await expect(rows).toHaveCount(3);
  const ids = await rows.getByRole('link', { name: /^Webhook \d+$/ }).allTextContents();
  await expect(page.getByTestId('refresh-paused')).toHaveCount(0);

  // tick the oldest row; newer webhooks arrive that would push it down and off a short page
  await page.getByRole('checkbox', { name: `Select webhook ${ids[2]!.slice(1)}` }).check();
  await expect(page.getByTestId('refresh-paused')).toContainText(
    'Auto-refresh is paused while rows are selected',
  );
  await snap(page, testInfo, 'refresh-paused');
  for (let index = 0; index < 2; index++) await api.createProperty(`Newer House ${index} ${Date.now()}`);
  await api.waitForStates(registrationId, Array(5).fill(SUCCESSFUL));
  // longer than the 10 s refresh: the table holds still, the ticked row where it was
  await page.waitForTimeout(12_000);
  await expect(rows.getByRole('link', { name: /^Webhook \d+$/ })).toHaveText(ids);
  await expect(page.getByTestId('selected-count')).toHaveText('1 selected on this page');

  // cleared, the list refreshes again and shows the newer webhooks
  await page.getByRole('checkbox', { name: `Select webhook ${ids[2]!.slice(1)}` }).uncheck();
  await expect(page.getByTestId('refresh-paused')).toHaveCount(0);
  await expect(rows).toHaveCount(5, { timeout: 20_000 });
});

test('a bulk action says it acts on exactly what its dry run counted', async ({
  page,
  api,
  target,
}, testInfo) => {
  const { registrationId } = await api.endedWebhooks(target, {
    status: 500,
    count: 2,
    name: 'Counted House',
  });

  await signIn(page, `/admin/webhooks?registrationId=${registrationId}&state=${FAILED}`);
  await page.getByRole('button', { name: 'Abort all matching…' }).click();
  const dialog = page.getByRole('dialog');
  await expect(dialog.getByTestId('operation-count')).toContainText('2 selected, 2 would change');
  await expect(dialog.getByTestId('operation-exact-note')).toContainText(
    'Confirming acts on exactly the 2 counted now',
  );
  // a third webhook fails after the count: the confirmed run does not sweep it in
  await api.createProperty(`Late House ${Date.now()}`);
  await api.waitForStates(registrationId, Array(3).fill(FAILED));
  await snap(page, testInfo, 'exact-count');
  await dialog.getByRole('button', { name: 'Abort 2 webhooks' }).click();
  await expect(dialog.getByTestId('operation-progress')).toHaveAttribute('data-state', 'done', {
    timeout: 60_000,
  });
  await expect.poll(() => api.statesOf(registrationId)).toEqual([FAILED, 5, 5]);
});

test('a bad link says what it could not read, and a page past the end says so', async ({
  page,
  api,
  target,
}, testInfo) => {
  const { registrationId } = await api.endedWebhooks(target, { status: 200, name: 'Linked House' });

  await signIn(page, '/admin/webhooks?state=99&createdFrom=notadate&entityId=abc&sort=bogus');
  const notice = page.getByTestId('bad-link');
  await expect(notice).toContainText('state "99"');
  await expect(notice).toContainText('createdFrom "notadate"');
  await expect(notice).toContainText('entityId "abc"');
  await expect(notice).toContainText('sort "bogus"');
  await snap(page, testInfo, 'bad-link');
  await page.goto('/admin/webhooks?state=abc');
  await expect(page.getByTestId('bad-link')).toContainText('state "abc"');

  await page.goto(`/admin/webhooks?registrationId=${registrationId}&page=99999`);
  const beyond = page.getByTestId('page-out-of-range');
  await expect(beyond).toContainText('Page 99,999 does not exist: 1 webhook fills 1 page.');
  await expect(page.getByTestId('bad-link')).toHaveCount(0);
  await beyond.getByRole('link', { name: 'Go to the last page' }).click();
  await expect(page.getByTestId('webhook-row')).toHaveCount(1);
});

test('"Due now" leaves out the webhooks a paused registration keeps, and names them apart', async ({
  page,
  api,
  target,
}, testInfo) => {
  await target.behave({ status: 200 });
  const registrationId = await api.createRegistration(target.url, [{ entityName: 'Property', type: 1 }]);
  await api.request('POST', `/api/webhook-registrations/${registrationId}/pause`);
  await api.createProperty(`Paused House ${Date.now()}`);
  await expect.poll(() => api.statesOf(registrationId)).toEqual([1]);

  await signIn(page, '/admin/');
  await expect(page.getByTestId('metric-due-held')).toContainText(
    'Not counted, held until resumed: 1 of paused registrations.',
  );
  await snap(page, testInfo, 'due-held');
  // resumed, it is delivered and nothing is held any more
  await api.request('POST', `/api/webhook-registrations/${registrationId}/resume`);
  await api.waitForStates(registrationId, [SUCCESSFUL]);
  await expect(page.getByTestId('metric-due-held')).toHaveCount(0, { timeout: 20_000 });
});
