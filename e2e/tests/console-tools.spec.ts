import { readFile } from 'node:fs/promises';
import { expect, signIn, snap, SUCCESSFUL, test } from '../fixtures/test';

/** Issue 30 item 17: CSV export of the filtered list, dark mode, keyboard navigation of tables. */

test('Export CSV writes every webhook the filters match, all pages, oldest first', async ({
  page,
  api,
  target,
}, testInfo) => {
  // one more than a page of the table: the export is not the visible page
  const { registrationId, webhooks } = await api.endedWebhooks(target, {
    status: 200,
    count: 21,
    name: 'Exported, "House"',
  });
  const ids = webhooks.map((w) => w.id).sort((a, b) => a - b);

  await signIn(page, `/admin/webhooks?registrationId=${registrationId}&state=${SUCCESSFUL}`);
  await expect(page.getByTestId('webhook-row')).toHaveCount(20);
  const download = page.waitForEvent('download');
  await page.getByRole('button', { name: 'Export CSV' }).click();
  const file = await download;
  expect(file.suggestedFilename()).toMatch(/^webhooks-\d{8}-\d{6}\.csv$/);
  const path = testInfo.outputPath('webhooks.csv');
  await file.saveAs(path);
  await testInfo.attach('webhooks.csv', { path, contentType: 'text/csv' });
  const lines = (await readFile(path, 'utf8')).trimEnd().split('\r\n');
  expect(lines[0]).toBe(
    'id,state,registration_id,target_url,entity_name,event,entity_id,group_key,attempts,last_attempt_at,last_status,last_error,next_attempt_at,created',
  );
  const rows = lines.slice(1).map((line) => line.split(','));
  expect(rows.map((row) => Number(row[0]))).toEqual(ids);
  for (const row of rows) {
    expect(row[1]).toBe('Successful');
    expect(row[2]).toBe(String(registrationId));
    expect(row[3]).toBe(target.url);
  }
  await expect(page.getByTestId('toast-success')).toContainText('Exported 21 webhooks.');
});

test.describe('in a browser set to dark', () => {
  test.use({ colorScheme: 'dark' });

  test('the console follows the system setting', async ({ page }, testInfo) => {
    await signIn(page, '/admin/webhooks');
    const colours = await page.evaluate(() => ({
      page: getComputedStyle(document.documentElement).backgroundColor,
      text: getComputedStyle(document.documentElement).color,
      card: getComputedStyle(document.querySelector('.card')!).backgroundColor,
    }));
    expect(colours.page).toBe('rgb(17, 20, 24)');
    expect(colours.text).toBe('rgb(230, 233, 238)');
    expect(colours.card).toBe('rgb(27, 32, 39)');
    await snap(page, testInfo, 'dark-webhooks');
  });

  test('a portal session whose theme says light stays light; one without a mode follows the system', async ({
    page,
    api,
    target,
  }) => {
    const id = await api.createRegistration(target.url, [{ entityName: 'Property', type: 1 }]);
    const me = await api.request<{ partyId: number }>('GET', '/api/accounts/myself');
    const background = async (theme: Record<string, string>) => {
      const session = await api.request<{ url: string }>('POST', '/api/webhook-portal/sessions', {
        partyId: me.partyId,
        registrationIds: [id],
        actions: [],
        expiresIn: '30m',
        allowedOrigins: [new URL(api.baseUrl).origin],
        theme,
      });
      await page.goto(session.url);
      const portal = page.getByTestId('portal');
      await expect(portal).toBeVisible();
      return portal.evaluate((element) => getComputedStyle(element).backgroundColor);
    };
    expect(await background({ mode: 'light' })).toBe('rgb(245, 246, 248)');
    expect(await background({ title: 'Follows the system' })).toBe('rgb(17, 20, 24)');
  });
});

test('in a light browser the console is light', async ({ page }) => {
  await signIn(page, '/admin/');
  const background = await page.evaluate(() => getComputedStyle(document.documentElement).backgroundColor);
  expect(background).toBe('rgb(245, 246, 248)');
});

test('tables by keyboard: j and k move, x selects, Enter opens, ? shows the keys', async ({
  page,
  api,
  target,
}, testInfo) => {
  const { registrationId } = await api.endedWebhooks(target, { status: 200, count: 3, name: 'Keyed House' });

  await signIn(page, `/admin/webhooks?registrationId=${registrationId}`);
  const rows = page.getByTestId('webhook-row');
  await expect(rows).toHaveCount(3);
  const link = (index: number) => rows.nth(index).getByRole('link', { name: /^Webhook \d+$/ });

  await page.keyboard.press('j');
  await expect(link(0)).toBeFocused();
  await page.keyboard.press('j');
  await page.keyboard.press('j');
  await expect(link(2)).toBeFocused();
  await page.keyboard.press('j');
  await expect(link(2)).toBeFocused();
  await page.keyboard.press('k');
  await expect(link(1)).toBeFocused();

  await page.keyboard.press('x');
  await expect(rows.nth(1).getByRole('checkbox')).toBeChecked();
  await expect(page.getByTestId('selected-count')).toHaveText('1 selected on this page');
  await page.keyboard.press('x');
  await expect(rows.nth(1).getByRole('checkbox')).not.toBeChecked();

  // keys typed into a field are the field's
  await page.getByLabel('Entity id').fill('jk');
  await expect(page.getByLabel('Entity id')).toHaveValue('jk');
  await expect(link(1)).not.toBeFocused();

  // a ? typed into the field is the field's too; outside it, it shows the keys
  await page.keyboard.press('?');
  await expect(page.getByLabel('Entity id')).toHaveValue('jk?');
  await expect(page.getByTestId('shortcuts-dialog')).toBeHidden();
  await page.locator('main').focus();
  await page.keyboard.press('?');
  const help = page.getByTestId('shortcuts-dialog');
  await expect(help).toBeVisible();
  await expect(help).toContainText('Next row of the table');
  await snap(page, testInfo, 'shortcuts');
  await page.keyboard.press('Escape');
  await expect(help).toBeHidden();

  await page.getByLabel('Entity id').fill('');
  await page.locator('main').focus();
  await page.keyboard.press('j');
  const id = ((await link(0).textContent()) ?? '').slice(1);
  await page.keyboard.press('Enter');
  await expect(page).toHaveURL(new RegExp(`/admin/webhooks/${id}$`));
  await expect(page.getByRole('heading', { level: 1 })).toContainText(`Webhook ${id}`);
});
