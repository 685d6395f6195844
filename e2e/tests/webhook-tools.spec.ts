import { expect, signIn, snap, test } from '../fixtures/test';

const SUCCESSFUL = 3;

test('Resend delivers a Successful webhook’s body again as a new webhook, and the audit trail names it', async ({
  page,
  api,
  target,
}, testInfo) => {
  await target.behave({ status: 200 });
  const registrationId = await api.createRegistration(target.url, [{ entityName: 'Property', type: 1 }]);
  await api.createProperty(`Resent House ${Date.now()}`);
  await api.waitForStates(registrationId, [SUCCESSFUL]);
  const [original] = await api.webhooksOf(registrationId);

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
