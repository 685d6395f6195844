import { expect, signInAndRegister, snap, test } from '../fixtures/test';

const RETRY_SCHEDULE_ATTEMPTS = 7;

test('Abort ends a Failed webhook for good; Retry delivers it once the target works again', async ({
  page,
  api,
  target,
}, testInfo) => {
  await target.behave({ status: 500 });
  const registration = await signInAndRegister({ page, api, target }, testInfo, ['Property Created']);

  // two properties: two webhooks in two groups, both failing every attempt
  const toRetry = await api.createProperty(`Retry House ${Date.now()}`);
  const toAbort = await api.createProperty(`Abort House ${Date.now()}`);
  const webhooks = await api.webhooksOf(registration.id);
  const retried = webhooks.find((w) => w.entityId === toRetry.id)!;
  const aborted = webhooks.find((w) => w.entityId === toAbort.id)!;

  const state = page.getByRole('heading', { level: 1 }).getByTestId('webhook-state');
  const actions = page.getByRole('group', { name: 'Operator actions' });
  const button = (name: string) => actions.getByRole('button', { name, exact: true });

  // Abort
  await page.goto(`/admin/webhooks/${aborted.id}`);
  await expect(state).toHaveText('Failed');
  await expect(page.getByTestId('attempt')).toHaveCount(RETRY_SCHEDULE_ATTEMPTS);
  await button('Abort').click();
  const abortDialog = page.getByRole('dialog', { name: `Abort webhook ${aborted.id}?` });
  await expect(abortDialog).toBeVisible();
  await snap(page, testInfo, 'abort-confirmation');
  await abortDialog.getByRole('button', { name: 'Abort webhook' }).click();
  await expect(page.getByTestId('toast-success')).toContainText(`Webhook ${aborted.id} aborted.`);
  await expect(state).toHaveText('Aborted');
  for (const action of ['Abort', 'Resolve', 'Retry']) await expect(button(action)).toBeDisabled();
  await snap(page, testInfo, 'webhook-aborted');

  // Retry, after the target recovers
  await target.behave({ status: 200 });
  await page.goto(`/admin/webhooks/${retried.id}`);
  await expect(state).toHaveText('Failed');
  await expect(page.getByTestId('attempt')).toHaveCount(RETRY_SCHEDULE_ATTEMPTS);
  await expect(button('Retry')).toBeEnabled();
  await button('Retry').click();
  const retryDialog = page.getByRole('dialog', { name: `Retry webhook ${retried.id}?` });
  await expect(retryDialog).toBeVisible();
  await snap(page, testInfo, 'retry-confirmation');
  await retryDialog.getByRole('button', { name: 'Retry webhook' }).click();
  await expect(page.getByTestId('toast-success')).toContainText(
    `Webhook ${retried.id} put back for one more attempt.`,
  );
  await expect(state).toHaveText('Successful');
  await expect(page.getByTestId('attempt')).toHaveCount(RETRY_SCHEDULE_ATTEMPTS + 1);
  await expect(page.getByTestId('webhook-attempt-count')).toHaveText(String(RETRY_SCHEDULE_ATTEMPTS + 1));
  // newest first: the eighth attempt succeeded
  await expect(page.getByTestId('attempt-status').first()).toHaveText('200');
  await snap(page, testInfo, 'webhook-retried');

  expect((await target.deliveriesOf(retried.id)).map((d) => d.answeredStatus)).toEqual([
    ...Array(RETRY_SCHEDULE_ATTEMPTS).fill(500),
    200,
  ]);
  // the aborted webhook was never tried again
  expect(await target.deliveriesOf(aborted.id)).toHaveLength(RETRY_SCHEDULE_ATTEMPTS);
  await page.goto(`/admin/webhooks/${aborted.id}`);
  await expect(state).toHaveText('Aborted');
});
