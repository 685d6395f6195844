import { expect, openSection, signInAndRegister, snap, test } from '../fixtures/test';

const RETRY_SCHEDULE_ATTEMPTS = 7;

test('a failing target drives a webhook through Retrying to Failed; its group is blocked until Resolve releases it', async ({
  page,
  api,
  target,
}, testInfo) => {
  // two attempts fail at once; the third is held, so the webhook can be seen while Retrying
  await target.behave({ status: 500, holdAfter: 2 });
  const registration = await signInAndRegister({ page, api, target }, testInfo, [
    'Property Created',
    'Property Updated',
  ]);

  // two changes of one property: the second waits behind the first in the property's group
  const property = await api.createProperty(`Failing House ${Date.now()}`);
  await api.renameProperty(property.id, `Failing House ${property.id}, renamed`);
  const webhooks = await api.webhooksOf(registration.id);
  const first = webhooks.find((w) => w.eventType === 1)!;
  const second = webhooks.find((w) => w.eventType === 2)!;
  expect(first.groupKey).toBe(`Property:${property.id}`);
  expect(second.groupKey).toBe(first.groupKey);

  await page.goto(`/admin/webhooks?registrationId=${registration.id}`);
  await expect(page.getByTestId('webhook-row')).toHaveCount(2);
  await page.getByRole('link', { name: `Webhook ${first.id}`, exact: true }).click();
  const state = page.getByRole('heading', { level: 1 }).getByTestId('webhook-state');
  const attempts = page.getByTestId('attempt');

  await expect(state).toHaveText('Retrying');
  await expect(attempts).toHaveCount(2);
  await expect(page.getByTestId('attempt-status')).toHaveText(['500', '500']);
  await snap(page, testInfo, 'webhook-retrying');

  // let the held attempt and the rest fail: all seven attempts, then Failed
  await target.behave({ status: 500 });
  await expect(state).toHaveText('Failed');
  await expect(attempts).toHaveCount(RETRY_SCHEDULE_ATTEMPTS);
  await expect(page.getByTestId('webhook-attempt-count')).toHaveText(String(RETRY_SCHEDULE_ATTEMPTS));
  await expect(page.getByTestId('attempt-status')).toHaveText(Array(RETRY_SCHEDULE_ATTEMPTS).fill('500'));
  for (let number = 1; number <= RETRY_SCHEDULE_ATTEMPTS; number++) {
    await expect(page.getByRole('heading', { name: `Attempt ${number}`, exact: true })).toBeVisible();
  }
  const actions = page.getByRole('group', { name: 'Operator actions' });
  await expect(actions.getByRole('button', { name: 'Retry', exact: true })).toBeEnabled();
  await snap(page, testInfo, 'webhook-failed');
  expect(await target.deliveriesOf(first.id)).toHaveLength(RETRY_SCHEDULE_ATTEMPTS);
  expect(await target.deliveriesOf(second.id)).toHaveLength(0);

  // its group is blocked, with the second change waiting behind it
  await openSection(page, 'Webhook groups');
  const group = page
    .getByTestId('blocked-group')
    .filter({ has: page.getByRole('link', { name: `Blocking webhook ${first.id}`, exact: true }) });
  await expect(group).toHaveCount(1);
  await expect(group).toContainText(`Property:${property.id}`);
  await expect(group.getByTestId('pending-count')).toHaveText('1');
  await snap(page, testInfo, 'blocked-group');

  // the target works again; Resolve releases the group and the waiting webhook is delivered
  await target.behave({ status: 200 });
  await group.getByRole('button', { name: `Resolve blocker ${first.id} of Property:${property.id}` }).click();
  const dialog = page.getByRole('dialog', { name: `Mark webhook ${first.id} resolved?` });
  await expect(dialog).toBeVisible();
  await snap(page, testInfo, 'resolve-confirmation');
  await dialog.getByRole('button', { name: 'Resolve webhook' }).click();
  await expect(page.getByTestId('toast-success')).toContainText(`Webhook ${first.id} resolved.`);
  await expect(page.getByTestId('drain-status')).toHaveText('Drained: nothing waits any more.', {
    timeout: 60_000,
  });
  await expect(group).toHaveCount(0);
  await snap(page, testInfo, 'group-drained');

  await expect
    .poll(async () => (await target.deliveriesOf(second.id)).map((d) => d.answeredStatus), {
      timeout: 60_000,
    })
    .toEqual([200]);
  // the resolved webhook was not delivered again
  expect(await target.deliveriesOf(first.id)).toHaveLength(RETRY_SCHEDULE_ATTEMPTS);

  await page.goto(`/admin/webhooks/${second.id}`);
  await expect(state).toHaveText('Successful');
  await expect(page.getByTestId('delivery-body')).toContainText('renamed');
  await page.goto(`/admin/webhooks/${first.id}`);
  await expect(state).toHaveText('Resolved');
  for (const action of ['Abort', 'Resolve', 'Retry']) {
    await expect(actions.getByRole('button', { name: action, exact: true })).toBeDisabled();
  }
  await snap(page, testInfo, 'webhook-resolved');
});
