import { createHmac } from 'node:crypto';
import {
  operatorActionEntryOf,
  expect,
  openSection,
  signIn,
  snap,
  SUCCESSFUL,
  FAILED,
  test,
  VIEWER,
} from '../fixtures/test';
import type { RecordedDelivery } from '../fixtures/webhook-target';

/** The e2e retry schedule has 7 attempts (e2e/README.md): a failing target fails a webhook in ~2 s. */
const RETRY_SCHEDULE_ATTEMPTS = 7;
const PROPERTY_CREATED = { entityName: 'Property', type: 1 };
const RESOLVED = 7;

/** A Standard Webhooks signature (`v1,<base64>`) of a delivery with `secret`. */
function signature(secret: string, id: string, timestamp: string, body: string): string {
  const key = Buffer.from(secret.replace(/^whsec_/, ''), 'base64');
  return `v1,${createHmac('sha256', key).update(`${id}.${timestamp}.${body}`).digest('base64')}`;
}

test('Recover from the registration page delivers the webhooks that failed during an outage', async ({
  page,
  api,
  target,
}, testInfo) => {
  const { registrationId, webhooks } = await api.endedWebhooks(target, {
    status: 500,
    count: 2,
    name: 'Outage House',
  });
  const webhookIds = webhooks.map((w) => w.id);
  // the outage ends
  await target.behave({ status: 200 });

  await signIn(page, `/admin/registrations/${registrationId}`);
  const tools = page.getByTestId('recovery-tools');
  await tools.getByRole('button', { name: 'Recover failed webhooks…' }).click();
  const dialog = page.getByRole('dialog', {
    name: `Recover the failed webhooks of registration ${registrationId}`,
  });
  await expect(dialog).toBeVisible();
  // a quick pick fills the window; the dry run counts what would change, and changes nothing
  await dialog.getByRole('button', { name: 'Last hour' }).click();
  await expect(dialog.getByLabel('Created from')).not.toHaveValue('');
  await dialog.getByRole('button', { name: 'Count what would change' }).click();
  await expect(dialog.getByTestId('operation-count')).toHaveText(
    '2 Failed webhooks would be delivered again.',
  );
  await snap(page, testInfo, 'recover-count');
  expect(await api.statesOf(registrationId)).toEqual([FAILED, FAILED]);

  await dialog.getByRole('button', { name: 'Recover 2 webhooks' }).click();
  const progress = dialog.getByTestId('operation-progress');
  await expect(progress).toHaveAttribute('data-state', 'done');
  await expect(progress.getByTestId('operation-changed')).toHaveText('2 recovered');
  await expect(progress.getByRole('progressbar')).toHaveAttribute('aria-valuenow', '2');
  await snap(page, testInfo, 'recover-done');
  await dialog.getByRole('button', { name: 'Close' }).click();
  await expect(dialog).toBeHidden();

  // a fresh schedule: each webhook's next attempt reaches the recovered target
  await api.waitForStates(registrationId, [SUCCESSFUL, SUCCESSFUL]);
  for (const id of webhookIds) {
    expect((await target.deliveriesOf(id)).map((d) => d.answeredStatus)).toEqual([
      ...Array(RETRY_SCHEDULE_ATTEMPTS).fill(500),
      200,
    ]);
  }

  // the audit trail says who recovered what, and how many changed
  const entry = await operatorActionEntryOf(page, 'Recover', registrationId);
  await expect(entry.getByTestId('audit-changed')).toHaveText('2');
  await expect(entry).toContainText('manager@example.com');
  await expect(entry.getByTestId('audit-filter')).toContainText('since');
  await snap(page, testInfo, 'audit-recover');
});

test('Replay writes the changes of a window again, with their bodies as they were, in order', async ({
  page,
  api,
  target,
}, testInfo) => {
  // grouped: the changes of one entity are delivered in order, replayed ones too
  const created = await api.register(target.url, [{ entityName: 'Property', type: 2 }], {
    shouldGroup: true,
  });
  // two changes of one property: the receiver got both, then lost them
  const property = await api.createProperty(`Replay House ${Date.now()}`);
  await api.renameProperty(property.id, `${property.name} (first name)`);
  await api.renameProperty(property.id, `${property.name} (second name)`);
  await expect.poll(async () => (await target.deliveries()).length, { timeout: 60_000 }).toBe(2);

  await signIn(page, `/admin/registrations/${created.id}`);
  await page.getByTestId('recovery-tools').getByRole('button', { name: 'Replay changes…' }).click();
  const dialog = page.getByRole('dialog', {
    name: `Replay the changes of a window to registration ${created.id}`,
  });
  await expect(dialog).toContainText('New webhooks are written for every change in the window');
  await dialog.getByRole('button', { name: 'Last hour' }).click();
  await dialog.getByRole('button', { name: 'Count what would change' }).click();
  // other tests' property updates of the party in the last hour count too
  await expect(dialog.getByTestId('operation-count')).toContainText('new webhooks would be written.');
  await snap(page, testInfo, 'replay-count');
  await dialog.getByRole('button', { name: /^Write \d+ webhooks$/ }).click();
  await expect(dialog.getByTestId('operation-progress')).toHaveAttribute('data-state', 'done');
  await dialog.getByRole('button', { name: 'Close' }).click();

  // the property's two changes arrive again, in their order, with the bodies they had then
  const ofProperty = (deliveries: RecordedDelivery[]) =>
    deliveries.filter((d) => (d.body as { entity?: { id?: number } }).entity?.id === property.id);
  await expect.poll(async () => ofProperty(await target.deliveries()).length, { timeout: 60_000 }).toBe(4);
  const all = ofProperty(await target.deliveries());
  const entities = all.map((d) => (d.body as { entity: unknown }).entity);
  expect(entities.slice(2)).toEqual(entities.slice(0, 2));
  expect(entities.map((e) => (e as { name: string }).name)).toEqual([
    `${property.name} (first name)`,
    `${property.name} (second name)`,
    `${property.name} (first name)`,
    `${property.name} (second name)`,
  ]);
  // new webhooks, not the old ones again
  expect(new Set(all.map((d) => d.headers['webhook-id'])).size).toBe(4);
});

test('a test event reaches the target signed and marked, and its answer is shown', async ({
  page,
  api,
  target,
}, testInfo) => {
  const registration = await api.register(target.url, [PROPERTY_CREATED]);
  await signIn(page, `/admin/registrations/${registration.id}`);
  const tools = page.getByTestId('recovery-tools');
  await tools.getByLabel('Event').selectOption({ label: 'Property Created' });
  await tools.getByRole('button', { name: 'Send test event' }).click();
  const result = tools.getByTestId('test-event-result');
  await expect(result).toContainText('The target accepted the test event');
  await expect(result.getByTestId('test-event-status')).toHaveText('200');
  await expect(result.getByTestId('test-event-error-kind')).toHaveText('None');
  await snap(page, testInfo, 'test-event-accepted');

  const [delivery, ...more] = await target.deliveries();
  expect(more).toHaveLength(0);
  expect(delivery!.headers['x-webhook-test']).toBe('1');
  const { 'webhook-id': id, 'webhook-timestamp': timestamp } = delivery!.headers;
  expect(delivery!.headers['webhook-signature']).toBe(
    signature(registration.signingSecret, id!, timestamp!, delivery!.rawBody),
  );
  expect(delivery!.body).toMatchObject({ event: { entityName: 'Property', type: 1 } });
  // not a webhook: nothing to deliver again, nothing in the tables
  expect(await api.webhooksOf(registration.id)).toHaveLength(0);

  // a failing target: the answer says how it failed
  await target.behave({ status: 503 });
  await tools.getByRole('button', { name: 'Send test event' }).click();
  await expect(result).toContainText('The test event failed');
  await expect(result.getByTestId('test-event-status')).toHaveText('503');
  await expect(result.getByTestId('test-event-error-kind')).not.toHaveText('None');
  await snap(page, testInfo, 'test-event-failed');
});

test('secret rotation shows the new secret once, with the end of the overlap; both sign meanwhile', async ({
  page,
  api,
  target,
}, testInfo) => {
  const registration = await api.register(target.url, [PROPERTY_CREATED]);
  await signIn(page, `/admin/registrations/${registration.id}`);
  await page.getByTestId('recovery-tools').getByRole('button', { name: 'Rotate signing secret…' }).click();
  const dialog = page.getByRole('dialog', {
    name: `Rotate the signing secret of registration ${registration.id}?`,
  });
  await dialog.getByRole('radio', { name: /^1 hour/ }).check();
  await snap(page, testInfo, 'rotate-confirmation');
  const asked = Date.now();
  await dialog.getByRole('button', { name: 'Rotate secret' }).click();

  const panel = page.getByTestId('rotated-secret-panel');
  await expect(panel).toBeVisible();
  const secret = ((await panel.getByTestId('signing-secret').textContent()) ?? '').trim();
  expect(secret).toMatch(/^whsec_[A-Za-z0-9+/]{43}=$/);
  expect(secret).not.toBe(registration.signingSecret);
  // the overlap ends an hour from now, said with its zone
  const overlapEnd = Date.parse(
    (await panel.getByTestId('secret-overlap').locator('time').getAttribute('datetime'))!,
  );
  expect(overlapEnd).toBeGreaterThan(asked + 55 * 60_000);
  expect(overlapEnd).toBeLessThan(Date.now() + 65 * 60_000);
  await expect(panel.getByTestId('secret-overlap')).toContainText('UTC');
  await snap(page, testInfo, 'rotated-secret');

  // during the overlap a delivery carries both signatures, the new one first
  await api.createProperty(`Rotation House ${Date.now()}`);
  await expect.poll(async () => (await target.deliveries()).length, { timeout: 60_000 }).toBe(1);
  const [delivery] = await target.deliveries();
  const { 'webhook-id': id, 'webhook-timestamp': timestamp } = delivery!.headers;
  expect(delivery!.headers['webhook-signature']).toBe(
    `${signature(secret, id!, timestamp!, delivery!.rawBody)} ${signature(
      registration.signingSecret,
      id!,
      timestamp!,
      delivery!.rawBody,
    )}`,
  );

  // shown once: hidden, or after a reload, it is gone from the page
  await panel.getByRole('button', { name: 'Hide the secret' }).click();
  await expect(panel).toBeHidden();
  expect(await page.content()).not.toContain(secret);
  await page.reload();
  await expect(page.getByTestId('recovery-tools')).toBeVisible();
  expect(await page.content()).not.toContain(secret);

  await operatorActionEntryOf(page, 'Rotate secret', registration.id);
});

test('triage shows the failing line, resolves it as a whole, and the audit trail lists it', async ({
  page,
  api,
  target,
}, testInfo) => {
  const { registrationId } = await api.endedWebhooks(target, { status: 500, count: 2, name: 'Outage House' });

  await signIn(page);
  await openSection(page, 'Webhook issues');
  // only this test's registration, as an operator narrowing down would
  await page.goto(`/admin/webhook-issues?registrationId=${registrationId}`);
  const line = page.getByTestId('triage-line');
  await expect(line).toHaveCount(1);
  await expect(line.getByTestId('triage-problem')).toHaveText('HTTP 500');
  await expect(line.getByTestId('triage-count')).toHaveText('2');
  await expect(line.getByTestId('webhook-state')).toHaveText('Failed');
  await snap(page, testInfo, 'triage');

  await line.getByRole('button', { name: 'Resolve all' }).click();
  const dialog = page.getByRole('dialog', { name: /^Resolve every webhook of registration/ });
  // the dry run counts at once
  await expect(dialog.getByTestId('operation-count')).toHaveText('2 selected, 2 would change, 0 skipped.');
  await dialog.getByRole('button', { name: 'Resolve 2 webhooks' }).click();
  await expect(dialog.getByTestId('operation-progress')).toHaveAttribute('data-state', 'done');
  await snap(page, testInfo, 'triage-resolved');
  await dialog.getByRole('button', { name: 'Close' }).click();
  // the page keeps showing what was done
  await expect(page.getByTestId('operation-summary')).toContainText('2 resolved');
  await expect(page.getByTestId('empty-state')).toContainText('Nothing to triage');
  expect(await api.statesOf(registrationId)).toEqual([RESOLVED, RESOLVED]);

  const entry = await operatorActionEntryOf(page, 'Bulk resolve', registrationId);
  await expect(entry.getByTestId('audit-changed')).toHaveText('2');
  await expect(entry.getByTestId('audit-filter')).toContainText('HTTP 500');
  await snap(page, testInfo, 'audit-bulk-resolve');
});

test('a viewer without Webhook.Update sees the recovery tools disabled, and why, in text', async ({
  page,
  api,
  target,
}, testInfo) => {
  const registration = await api.register(target.url, [PROPERTY_CREATED]);
  await page.goto(`/admin/registrations/${registration.id}`);
  await page.getByLabel('Email').fill(VIEWER.email);
  await page.getByLabel('Password').fill(VIEWER.password);
  await page.getByRole('button', { name: 'Sign in' }).click();
  await expect(page.getByTestId('signed-in-account')).toContainText(VIEWER.email);

  const tools = page.getByTestId('recovery-tools');
  await expect(tools.getByTestId('recovery-permission-note')).toBeVisible();
  await expect(tools.getByTestId('recovery-permission-note')).toContainText(
    'Your account lacks the Webhook.Update permission',
  );
  for (const name of [
    'Recover failed webhooks…',
    'Replay changes…',
    'Rotate signing secret…',
    'Send test event',
  ]) {
    await expect(tools.getByRole('button', { name })).toBeDisabled();
  }
  await snap(page, testInfo, 'recovery-viewer');
});
