import type { Page } from '@playwright/test';
import { expect, openSection, signInAndRegister, snap, test } from '../fixtures/test';

const PROPERTY_CREATED = { entityName: 'Property', type: 1 };

/** The registration's status badge in the page title. */
const statusBadge = (page: Page) =>
  page.getByRole('heading', { level: 1 }).getByTestId('registration-status');

/** Confirms a registration action in its dialog and waits for the success notification. */
async function confirmAction(page: Page, title: string, confirm: string, done: string): Promise<void> {
  const dialog = page.getByRole('dialog', { name: title });
  await expect(dialog).toBeVisible();
  await dialog.getByRole('button', { name: confirm }).click();
  await expect(page.getByTestId('toast-success')).toContainText(done);
  await expect(dialog).toBeHidden();
}

test('a paused registration keeps its webhooks without an attempt and delivers them on resume', async ({
  page,
  api,
  target,
}, testInfo) => {
  const registration = await signInAndRegister({ page, api, target }, testInfo, ['Property Created']);
  // a second registration of the same party and target stays active: when it has received the
  // change, the dispatcher has had its chance at the paused registration's webhook too
  const witness = target.sibling('witness');
  await api.createRegistration(witness.url, [PROPERTY_CREATED]);

  await page.getByRole('link', { name: `Go to registration ${registration.id}` }).click();
  await expect(statusBadge(page)).toHaveText('Active');
  const actions = page.getByRole('group', { name: 'Delivery actions' });
  await expect(actions.getByRole('button', { name: 'Resume', exact: true })).toBeDisabled();
  await expect(page.getByTestId('health-panel')).toContainText('Closed');

  // Pause, with confirmation
  await actions.getByRole('button', { name: 'Pause', exact: true }).click();
  await snap(page, testInfo, 'pause-confirmation');
  await confirmAction(
    page,
    `Pause registration ${registration.id}?`,
    'Pause registration',
    `Registration ${registration.id} paused.`,
  );
  await expect(statusBadge(page)).toHaveText('Paused');
  await expect(page.getByTestId('paused-banner')).toContainText('Paused by an operator.');
  await expect(actions.getByRole('button', { name: 'Pause', exact: true })).toBeDisabled();

  // a change while paused: its webhook is written, but not sent
  const property = await api.createProperty(`Paused House ${Date.now()}`);
  await expect
    .poll(async () => (await witness.deliveries()).map((d) => d.answeredStatus), { timeout: 60_000 })
    .toEqual([200]);
  const [webhook] = await api.webhooksOf(registration.id);
  expect(webhook).toMatchObject({ entityId: property.id, state: 1, attemptCount: 0 });
  expect(await target.deliveries()).toHaveLength(0);
  await expect(page.getByTestId('health-due-count')).toHaveText('1');
  await expect(page.getByTestId('health-status')).toContainText('Paused');
  await snap(page, testInfo, 'registration-paused');

  // the list and the overview show it paused
  await openSection(page, 'Registrations');
  const row = page
    .getByTestId('registrations-table')
    .getByRole('row')
    .filter({ has: page.getByRole('link', { name: `Registration ${registration.id}`, exact: true }) });
  await expect(row.getByTestId('registration-status')).toHaveText('Paused');
  await expect(row.getByTestId('registration-health')).toBeVisible();
  await snap(page, testInfo, 'registrations-with-status');
  await openSection(page, 'Overview');
  await expect(
    page
      .getByTestId('paused-registration')
      .filter({ has: page.getByRole('link', { name: `Registration ${registration.id}`, exact: true }) }),
  ).toContainText(target.url);
  await snap(page, testInfo, 'overview-endpoints');

  // Resume: the webhook written meanwhile is delivered, with its first attempt
  await page.goto(`/admin/registrations/${registration.id}`);
  await actions.getByRole('button', { name: 'Resume', exact: true }).click();
  await confirmAction(
    page,
    `Resume registration ${registration.id}?`,
    'Resume registration',
    `Registration ${registration.id} resumed.`,
  );
  await expect(statusBadge(page)).toHaveText('Active');
  await expect(page.getByTestId('paused-banner')).toHaveCount(0);
  await expect
    .poll(async () => (await target.deliveriesOf(webhook!.id)).map((d) => d.answeredStatus), {
      timeout: 60_000,
    })
    .toEqual([200]);
  const recent = page
    .getByTestId('recent-webhooks')
    .getByRole('row')
    .filter({ has: page.getByRole('link', { name: `Webhook ${webhook!.id}`, exact: true }) });
  await expect(recent.getByTestId('webhook-state')).toHaveText('Successful', { timeout: 60_000 });
  const [delivered] = await api.webhooksOf(registration.id);
  expect(delivered).toMatchObject({ id: webhook!.id, state: 3, attemptCount: 1 });
  await snap(page, testInfo, 'registration-resumed');
});

test('a 410 Gone disables the registration: the console shows why, keeps its webhook, and re-enables it', async ({
  page,
  api,
  target,
}, testInfo) => {
  await target.behave({ status: 410 });
  const registration = await signInAndRegister({ page, api, target }, testInfo, ['Property Created']);
  await page.getByRole('link', { name: `Go to registration ${registration.id}` }).click();
  await expect(statusBadge(page)).toHaveText('Active');

  const property = await api.createProperty(`Gone House ${Date.now()}`);
  await expect
    .poll(async () => (await target.deliveries()).map((d) => d.answeredStatus), { timeout: 60_000 })
    .toEqual([410]);

  // the page sees the dispatcher disable it (its health refreshes every few seconds)
  const banner = page.getByTestId('disabled-banner');
  await expect(banner).toContainText('The endpoint answered 410 Gone', { timeout: 60_000 });
  await expect(statusBadge(page)).toHaveText('Disabled');
  await expect(page.getByTestId('breaker-state')).toContainText('Closed');
  await snap(page, testInfo, 'registration-disabled');

  // its webhook is kept, waiting for its next attempt, not Failed
  const [webhook] = await api.webhooksOf(registration.id);
  expect(webhook).toMatchObject({ entityId: property.id, state: 2, attemptCount: 1 });

  await openSection(page, 'Overview');
  await expect(
    page
      .getByTestId('disabled-registration')
      .filter({ has: page.getByRole('link', { name: `Registration ${registration.id}`, exact: true }) }),
  ).toContainText('The endpoint answered 410 Gone');

  // the endpoint is back: Re-enable delivers the kept webhook
  await target.behave({ status: 200 });
  await page.goto(`/admin/registrations/${registration.id}`);
  await banner.getByRole('button', { name: 'Re-enable' }).click();
  await snap(page, testInfo, 're-enable-confirmation');
  await confirmAction(
    page,
    `Re-enable registration ${registration.id}?`,
    'Re-enable registration',
    `Registration ${registration.id} re-enabled.`,
  );
  await expect(statusBadge(page)).toHaveText('Active');
  await expect(banner).toHaveCount(0);
  await expect
    .poll(async () => (await target.deliveriesOf(webhook!.id)).map((d) => d.answeredStatus), {
      timeout: 60_000,
    })
    .toEqual([410, 200]);
  await expect
    .poll(async () => (await api.webhooksOf(registration.id))[0]?.state, { timeout: 60_000 })
    .toBe(3);
});
