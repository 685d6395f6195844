import { createHmac } from 'node:crypto';
import { expect, openSection, signIn, snap, test } from '../fixtures/test';

/**
 * Notifications to operators (docs/admin.md#notifications): the operator sets, on the console's
 * Notifications page, the addresses to mail and an operator webhook (its secret shown once);
 * when a registration of the party is then disabled (its endpoint answers 410), the operator
 * webhook receives a POST saying so, signed with that secret (Standard Webhooks).
 */

test('the Notifications page sets the party’s operator webhook, which is told of a disabled registration', async ({
  page,
  api,
  target,
}, testInfo) => {
  const me = await api.request<{ partyId: number }>('GET', '/api/accounts/myself');
  const operatorHook = target.sibling('operator');
  try {
    await signIn(page);
    await openSection(page, 'Registrations');
    await page.getByRole('link', { name: 'Notifications', exact: true }).click();
    await expect(page.getByRole('heading', { level: 1 })).toHaveText('Notifications');
    const form = page.getByRole('form', { name: 'Notifications' });
    await expect(page.getByTestId('notification-recipients')).toContainText('manager@example.com');
    await form.getByLabel('These addresses (none: no mail)').check();
    await form.getByLabel('Addresses', { exact: true }).fill('not-an-address');
    await form.getByLabel('Operator webhook URL (optional)').fill(operatorHook.url);
    await form.getByRole('button', { name: 'Save notifications' }).click();
    // the API's ProblemDetails, by field
    await expect(form).toContainText('must be an email address');
    await form.getByLabel('Addresses', { exact: true }).fill('ops@example.com');
    await form.getByRole('button', { name: 'Save notifications' }).click();
    await expect(page.getByTestId('notifications-saved')).toContainText('ops@example.com');
    const secret = (await page
      .getByTestId('operator-secret-panel')
      .getByTestId('signing-secret')
      .textContent())!;
    expect(secret).toMatch(/^whsec_/);
    await snap(page, testInfo, 'notifications-saved');
    // saved: the page read again shows what was set, and no secret
    await page.reload();
    await expect(page.getByTestId('notification-recipients')).toContainText('ops@example.com');
    await expect(page.getByTestId('operator-secret-panel')).toHaveCount(0);
    await expect(
      page.getByRole('form', { name: 'Notifications' }).getByLabel('Operator webhook URL (optional)'),
    ).toHaveValue(operatorHook.url);

    // an endpoint that is gone: its registration is disabled, and the operators told
    const gone = target.sibling('gone');
    await gone.behave({ status: 410 });
    const registrationId = await api.createRegistration(gone.url, [{ entityName: 'Property', type: 1 }]);
    await api.createProperty('Notified House');
    await expect.poll(async () => (await operatorHook.deliveries()).length, { timeout: 60_000 }).toBe(1);
    const [notice] = await operatorHook.deliveries();
    expect(notice!.body).toMatchObject({
      type: 'registration-disabled',
      partyId: me.partyId,
      registrationId,
      targetUrl: gone.url,
      reason: 'gone',
    });
    const { 'webhook-id': id, 'webhook-timestamp': timestamp } = notice!.headers;
    const key = Buffer.from(secret.replace(/^whsec_/, ''), 'base64');
    const expected = createHmac('sha256', key)
      .update(`${id}.${timestamp}.${notice!.rawBody}`)
      .digest('base64');
    expect(notice!.headers['webhook-signature']).toBe(`v1,${expected}`);
  } finally {
    // later tests of the run see the party's defaults again
    await api.request('PUT', `/api/webhook-notifications/${me.partyId}`, { emails: null, webhookUrl: null });
  }
});
