import { expect, openSection, signInAndRegister, snap, test } from '../fixtures/test';

/** Issue 30 items 1 (released groups counted exactly) and 6 (a registration's life in the audit trail). */

const FAILED = 4;
const WAITING = 130;

test('a released group is counted exactly past a hundred waiting, and a group held again says so', async ({
  page,
  api,
  target,
}, testInfo) => {
  test.setTimeout(300_000);
  await target.behave({ status: 500 });
  const registration = await signInAndRegister({ page, api, target }, testInfo, [
    'Property Created',
    'Property Updated',
  ]);
  const property = await api.createProperty(`Crowded House ${Date.now()}`);
  await api.waitForStates(registration.id, [FAILED]);
  const [blocker] = await api.webhooksOf(registration.id);
  // more changes wait behind the Failed head than one page of the API holds
  for (let i = 1; i <= WAITING; i++)
    await api.renameProperty(property.id, `Crowded House ${property.id} #${i}`);

  await openSection(page, 'Webhook groups');
  const group = page
    .getByTestId('blocked-group')
    .filter({ has: page.getByRole('link', { name: `Blocking webhook ${blocker!.id}`, exact: true }) });
  await expect(group.getByTestId('pending-count')).toHaveText(String(WAITING));

  // the target still fails: the retried blocker fails again, and the panel says the group is held
  await group
    .getByRole('button', { name: `Retry blocker ${blocker!.id} of Property:${property.id}` })
    .click();
  await page.getByRole('dialog').getByRole('button', { name: 'Retry webhook' }).click();
  const status = page.getByTestId('drain-status');
  await expect(status).toHaveText(
    `Held again: webhook ${blocker!.id} failed; ${WAITING} waiting behind it.`,
    {
      timeout: 60_000,
    },
  );
  await snap(page, testInfo, 'group-held-again');

  // the target works: every one of them is delivered, and the panel counts them all, not a page
  await target.behave({ status: 200 });
  await page.getByRole('button', { name: `Stop watching Property:${property.id}` }).click();
  await group
    .getByRole('button', { name: `Retry blocker ${blocker!.id} of Property:${property.id}` })
    .click();
  await page.getByRole('dialog').getByRole('button', { name: 'Retry webhook' }).click();
  await expect(status).toHaveText('Drained: nothing waits any more.', { timeout: 120_000 });
  await expect(page.getByTestId('drain-progress')).toContainText(`${WAITING + 1} delivered`);
  await snap(page, testInfo, 'group-drained-counted');
});

test('creating a registration, changing its URL and deleting it are in the audit trail', async ({
  page,
  api,
  target,
}, testInfo) => {
  const registration = await signInAndRegister({ page, api, target }, testInfo, ['Property Created']);
  await page.getByRole('link', { name: `Go to registration ${registration.id}` }).click();
  await page.getByRole('button', { name: 'Edit URL and rate limit' }).click();
  const form = page.getByRole('form', { name: 'Delivery settings' });
  const moved = target.sibling('moved').url;
  await form.getByLabel('Target URL').fill(moved);
  await form.getByRole('button', { name: 'Save' }).click();
  await expect(page.getByTestId('registration-target-url')).toHaveText(moved);
  await page.getByRole('button', { name: 'Delete registration' }).click();
  await page
    .getByRole('dialog', { name: `Delete registration ${registration.id}?` })
    .getByRole('button', { name: 'Delete registration' })
    .click();
  await expect(
    page.getByTestId('toast-success').filter({ hasText: `Registration ${registration.id} deleted` }),
  ).toBeVisible();

  await page.goto(`/admin/operator-actions?registrationId=${registration.id}`);
  const entries = page.getByTestId('audit-entry');
  await expect(entries).toHaveCount(3);
  // newest first
  expect(await entries.evaluateAll((rows) => rows.map((row) => row.getAttribute('data-action')))).toEqual([
    'registration.delete',
    'registration.update-target',
    'registration.create',
  ]);
  await snap(page, testInfo, 'registration-audit');
});
