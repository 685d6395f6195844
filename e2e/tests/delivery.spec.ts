import { createHmac } from 'node:crypto';
import { expect, OPERATOR, signInAndRegister, snap, test } from '../fixtures/test';

/** The Standard Webhooks signature the receiver checks, from the secret the console showed once. */
function expectedSignature(secret: string, id: string, timestamp: string, body: string): string {
  const key = Buffer.from(secret.replace(/^whsec_/, ''), 'base64');
  return `v1,${createHmac('sha256', key).update(`${id}.${timestamp}.${body}`).digest('base64')}`;
}

test('a registration created in the console receives a delivery after an API write', async ({
  page,
  api,
  target,
}, testInfo) => {
  const registration = await signInAndRegister(
    { page, api, target },
    testInfo,
    ['Property Created', 'Property Updated'],
    'registration-create',
  );

  await page.getByRole('link', { name: `Go to registration ${registration.id}` }).click();
  await expect(page.getByRole('heading', { level: 1 })).toHaveText(`Registration ${registration.id} Active`);
  await expect(page.getByTestId('registration-target-url')).toHaveText(target.url);
  await expect(page.getByTestId('registration-auth-type')).toHaveText('No Auth');
  await expect(page.getByTestId('registration-events')).toContainText('Property: Created, Updated');
  // the party by name, its id beside
  await expect(page.getByTestId('registration-party')).toHaveText(
    new RegExp(`^${OPERATOR.partyName} \\(party \\d+\\)$`),
  );

  // a write through the API, as an integration makes it
  const name = `Delivery House ${Date.now()}`;
  const property = await api.createProperty(name);

  await expect.poll(async () => (await target.deliveries()).length, { timeout: 60_000 }).toBe(1);
  const [delivery] = await target.deliveries();
  expect(delivery!.answeredStatus).toBe(200);
  expect(delivery!.body).toMatchObject({
    entity: { id: property.id, name },
    event: { entityName: 'Property', type: 1 },
  });
  const { 'webhook-id': webhookId, 'webhook-timestamp': timestamp } = delivery!.headers;
  expect(delivery!.headers['webhook-signature']).toBe(
    expectedSignature(registration.signingSecret, webhookId!, timestamp!, delivery!.rawBody),
  );

  // the registration's recent webhooks show it delivered (the list refreshes itself)
  const recent = page.getByTestId('recent-webhooks');
  const row = recent
    .getByRole('row')
    .filter({ has: page.getByRole('link', { name: `Webhook ${webhookId}`, exact: true }) });
  await expect(row.getByTestId('webhook-state')).toHaveText('Successful', { timeout: 60_000 });
  await snap(page, testInfo, 'registration-detail');

  await row.getByRole('link', { name: `Webhook ${webhookId}`, exact: true }).click();
  await expect(page.getByRole('heading', { level: 1 })).toContainText(`Webhook ${webhookId}`);
  await expect(page.getByRole('heading', { level: 1 }).getByTestId('webhook-state')).toHaveText('Successful');
  await expect(page.getByTestId('webhook-attempt-count')).toHaveText('1');
  await expect(page.getByTestId('attempt')).toHaveCount(1);
  await expect(page.getByTestId('attempt-status')).toHaveText('200');
  await expect(page.getByTestId('delivery-body')).toContainText(name);
  // the change came from the operator's own write: party and account by name, the ids beside
  await expect(page.getByTestId('webhook-initiator')).toHaveText(
    new RegExp(`^${OPERATOR.partyName} · ${OPERATOR.accountName} \\(party \\d+, account \\d+\\)$`),
  );
  await expect(page.getByTestId('delivery-headers')).toContainText('webhook-signature');
  // the API has no secrets to show: the signature is masked
  await expect(page.getByTestId('delivery-headers')).not.toContainText(
    delivery!.headers['webhook-signature']!,
  );
  await snap(page, testInfo, 'webhook-successful');

  // the webhooks screen, filtered to the registration through the address
  await page.goto(`/admin/webhooks?registrationId=${registration.id}`);
  await expect(page.getByTestId('webhook-row')).toHaveCount(1);
  await expect(page.getByTestId('webhook-row').getByTestId('webhook-state')).toHaveText('Successful');
  await snap(page, testInfo, 'webhooks-filtered');

  // deleting the registration, with confirmation
  await page.getByRole('link', { name: `Registration ${registration.id}`, exact: true }).click();
  await page.getByRole('button', { name: 'Delete registration' }).click();
  const dialog = page.getByRole('dialog', { name: `Delete registration ${registration.id}?` });
  await expect(dialog).toBeVisible();
  await snap(page, testInfo, 'registration-delete-confirmation');
  await dialog.getByRole('button', { name: 'Delete registration' }).click();
  await expect(page.getByTestId('toast-success')).toContainText(`Registration ${registration.id} deleted`);
  await expect(page.getByRole('heading', { level: 1 })).toHaveText('Registrations');
});
