import { expect, openSection, OPERATOR, snap, test } from '../fixtures/test';

test('signs in, shows every screen and signs out', async ({ page }, testInfo) => {
  // signed out, the sign-in page stands in for the screen the address names (an address the
  // console had before, /blocked-groups, names the webhook groups' screen)
  await page.goto('/admin/blocked-groups');
  await expect(page.getByRole('heading', { name: 'Sign in to the operator console' })).toBeVisible();
  await snap(page, testInfo, 'sign-in');

  await page.getByLabel('Email').fill(OPERATOR.email);
  await page.getByLabel('Password').fill('not-the-password');
  await page.getByRole('button', { name: 'Sign in' }).click();
  await expect(page.getByTestId('sign-in-error')).toBeVisible();
  await snap(page, testInfo, 'sign-in-refused');

  await page.getByLabel('Password').fill(OPERATOR.password);
  await page.getByRole('button', { name: 'Sign in' }).click();
  await expect(page.getByTestId('signed-in-account')).toContainText(OPERATOR.email);
  await expect(page.getByTestId('signed-in-account')).toContainText('Property Management Company');
  // … and lands on the screen it was asked for
  await expect(page).toHaveURL(/\/admin\/webhook-groups$/);
  await expect(page.getByRole('heading', { level: 1 })).toHaveText('Webhook groups (blocked)');

  await openSection(page, 'Overview');
  await expect(page.getByTestId('metric-success-rate')).toBeVisible();
  await expect(page.getByTestId('metric-blocked-groups')).toBeVisible();
  await expect(page.getByTestId('attempts-chart')).toBeVisible();
  await expect(page.getByTestId('state-count-Failed')).toBeVisible();
  await snap(page, testInfo, 'overview');

  await openSection(page, 'Webhooks');
  await snap(page, testInfo, 'webhooks');
  await openSection(page, 'Registrations');
  await snap(page, testInfo, 'registrations');
  await openSection(page, 'Webhook groups');
  await snap(page, testInfo, 'webhook-groups');

  // a narrow screen: the tables become cards
  await page.setViewportSize({ width: 390, height: 844 });
  await page.goto('/admin/webhooks');
  await expect(page.getByRole('heading', { level: 1 })).toHaveText('Webhooks');
  await snap(page, testInfo, 'webhooks-narrow');
  await page.setViewportSize({ width: 1280, height: 800 });

  // a reload keeps the operator signed in (the session lives in sessionStorage)
  await page.reload();
  await expect(page.getByTestId('signed-in-account')).toContainText(OPERATOR.email);

  await page.getByRole('button', { name: 'Sign out' }).click();
  await expect(page.getByRole('heading', { name: 'Sign in to the operator console' })).toBeVisible();
  await expect(page.getByText('You are signed out.')).toBeVisible();
  await expect(page.getByTestId('signed-in-account')).toHaveCount(0);
  await snap(page, testInfo, 'signed-out');

  // and stays signed out across a reload
  await page.reload();
  await expect(page.getByRole('heading', { name: 'Sign in to the operator console' })).toBeVisible();
});
