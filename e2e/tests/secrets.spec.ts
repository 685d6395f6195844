import { createHmac, randomBytes } from 'node:crypto';
import type { Page, TestInfo } from '@playwright/test';
import { createdRegistration, expect, openSection, signIn, snap, test } from '../fixtures/test';
import { TargetClient } from '../fixtures/webhook-target';

/**
 * "Stored target credentials encrypted at rest, never logged, never in any API response or admin
 * screen after creation": a Basic Auth and a Target API Token registration are created in the
 * console, their targets receive the credentials, and no console screen (nor a response the
 * console fetched, nor its storage) shows a credential or a signing secret afterwards.
 */

/** WebhookState.Failed, and the attempts of the e2e retry schedule (global-setup.ts). */
const FAILED = 4;
const RETRY_SCHEDULE_ATTEMPTS = 7;

/** A value no screen may show, and what it is (for the failure message). */
interface Forbidden {
  name: string;
  value: string;
}

/** `value` and its URL-encoded form (a leak into an address or a link), when that differs. */
function forbidden(name: string, value: string): Forbidden[] {
  const encoded = encodeURIComponent(value);
  return encoded === value
    ? [{ name, value }]
    : [
        { name, value },
        { name: `${name} (URL-encoded)`, value: encoded },
      ];
}

/**
 * A signing secret, its base64 body after `whsec_`, and the body's first and last 12 characters
 * (72 random bits each), so an abbreviated display (`whsec_AbC…`) counts as shown too.
 */
function forbiddenSecret(name: string, secret: string): Forbidden[] {
  const body = secret.replace(/^whsec_/, '');
  const tail = body.replace(/=+$/, '').slice(-12);
  return [
    ...forbidden(name, secret),
    ...forbidden(`${name} (base64 body)`, body),
    ...forbidden(`${name} (start of the body)`, body.slice(0, 12)),
    ...forbidden(`${name} (end of the body)`, tail),
  ];
}

/** The Standard Webhooks signature the receiver checks, from the secret the console showed once. */
function expectedSignature(secret: string, id: string, timestamp: string, body: string): string {
  const key = Buffer.from(secret.replace(/^whsec_/, ''), 'base64');
  return `v1,${createHmac('sha256', key).update(`${id}.${timestamp}.${body}`).digest('base64')}`;
}

/**
 * Everything a screen holds: its serialized HTML (attributes, hidden and collapsed elements
 * included), its whole text content, the text as rendered, the current values of its form
 * controls (which the HTML does not always carry) and the document title.
 */
async function screenContents(page: Page): Promise<Record<string, string>> {
  const html = await page.content();
  const dom = await page.evaluate(() => ({
    'text content': document.documentElement.textContent ?? '',
    'rendered text': document.body.innerText,
    'form control values': Array.from(
      document.querySelectorAll<HTMLInputElement | HTMLTextAreaElement | HTMLSelectElement>(
        'input, textarea, select',
      ),
      (control) => control.value,
    ).join('\n'),
    title: document.title,
  }));
  return { HTML: html, ...dom };
}

/** `<what> in <where>` for each forbidden value found. */
function leaksIn(contents: Record<string, string>, values: readonly Forbidden[]): string[] {
  const leaks: string[] = [];
  for (const [where, text] of Object.entries(contents)) {
    for (const { name, value } of values) if (text.includes(value)) leaks.push(`${name} in ${where}`);
  }
  return leaks;
}

async function expectNothingShown(page: Page, screen: string, values: readonly Forbidden[]): Promise<void> {
  const leaks = leaksIn(await screenContents(page), values);
  expect(leaks, `secrets shown on ${screen} (${page.url()})`).toEqual([]);
}

type Auth =
  { type: 'Basic Auth'; username: string; password: string } | { type: 'Target API Token'; apiKey: string };

/**
 * Creates a grouped registration for Property Created in the console with target credentials;
 * returns its id and the signing secret shown once. Checks on the way that the screen scan sees
 * what it must see: the credential typed into the form and the secret on the created panel.
 */
async function createWithCredentials(
  page: Page,
  testInfo: TestInfo,
  options: { targetUrl: string; auth: Auth; screenshot: string },
): Promise<{ id: number; signingSecret: string }> {
  await openSection(page, 'Registrations');
  await page.getByRole('link', { name: 'New registration' }).click();
  await expect(page.getByRole('heading', { level: 1, name: 'New registration' })).toBeVisible();
  await page.getByLabel('Target URL').fill(options.targetUrl);
  await page
    .getByTestId('events-picker')
    .getByRole('checkbox', { name: 'Property Created', exact: true })
    .check();
  await page.getByRole('checkbox', { name: /group them/ }).check();
  await page.getByLabel('Authorization type').selectOption({ label: options.auth.type });
  let typed: string;
  if (options.auth.type === 'Basic Auth') {
    await page.getByLabel('User name').fill(options.auth.username);
    await page.getByLabel('Password', { exact: true }).fill(options.auth.password);
    typed = options.auth.password;
  } else {
    await page.getByLabel('API key').fill(options.auth.apiKey);
    typed = options.auth.apiKey;
  }
  // the scan sees a credential where it is (the operator's own input), so its silence later counts
  expect(leaksIn(await screenContents(page), [{ name: 'typed credential', value: typed }])).toContain(
    'typed credential in form control values',
  );
  await snap(page, testInfo, `${options.screenshot}-form`);
  await page.getByRole('button', { name: 'Create registration' }).click();

  const { id, signingSecret } = await createdRegistration(page);
  // the one screen that shows the secret: the scan finds it in the HTML and the text
  const shown = leaksIn(await screenContents(page), [{ name: 'secret', value: signingSecret }]);
  expect(shown).toEqual(expect.arrayContaining(['secret in HTML', 'secret in text content']));
  await snap(page, testInfo, `${options.screenshot}-secret`);
  return { id, signingSecret };
}

test('target credentials and signing secrets are never shown on an admin screen after creation', async ({
  page,
  api,
  target,
}, testInfo) => {
  const suffix = randomBytes(6).toString('hex');
  const username = `e2e-user-${suffix}`;
  const password = `Pw-${randomBytes(9).toString('hex')}-Quokka!`;
  const apiKey = `key_${randomBytes(16).toString('hex')}`;
  const basicValue = Buffer.from(`${username}:${password}`).toString('base64');
  const credentials: Forbidden[] = [
    ...forbidden('the Basic Auth password', password),
    ...forbidden('the Basic Auth user name', username),
    ...forbidden('base64 of user name:password', basicValue),
    ...forbidden('the API key', apiKey),
  ];

  // the Basic Auth target answers 200; the API-token one fails every attempt, so its webhook ends
  // Failed and blocks its group: the webhook groups screen and a failed attempt show it too
  const origin = process.env.E2E_TARGET_ORIGIN;
  if (!origin) throw new Error('E2E_TARGET_ORIGIN is not set: run the suite through playwright.config.ts');
  const keyTarget = new TargetClient(origin, `${target.name}-key`);
  await keyTarget.behave({ status: 500 });

  await signIn(page);
  const basic = await createWithCredentials(page, testInfo, {
    targetUrl: target.url,
    auth: { type: 'Basic Auth', username, password },
    screenshot: 'secrets-basic',
  });
  api.cleanUpRegistration(basic.id);
  // the panel shows the secret, but never the credentials
  await expectNothingShown(page, 'the created panel of the Basic Auth registration', credentials);

  const keyed = await createWithCredentials(page, testInfo, {
    targetUrl: keyTarget.url,
    auth: { type: 'Target API Token', apiKey },
    screenshot: 'secrets-api-key',
  });
  api.cleanUpRegistration(keyed.id);
  await expectNothingShown(page, 'the created panel of the API-token registration', [
    ...credentials,
    ...forbiddenSecret('the Basic Auth registration’s signing secret', basic.signingSecret),
  ]);

  const all: Forbidden[] = [
    ...credentials,
    ...forbiddenSecret('the Basic Auth registration’s signing secret', basic.signingSecret),
    ...forbiddenSecret('the API-token registration’s signing secret', keyed.signingSecret),
  ];

  // from here on, every API response the console reads is kept and checked at the end
  const responses: Promise<{ url: string; body: string | null }>[] = [];
  page.on('response', (response) => {
    const url = response.url();
    if (!new URL(url).pathname.startsWith('/api/')) return;
    responses.push(
      response.text().then(
        (body) => ({ url, body }),
        () => ({ url, body: null }),
      ),
    );
  });

  // straight from the panel, in the same page (whatever the app still holds in memory)
  await page.getByRole('link', { name: `Go to registration ${keyed.id}` }).click();
  await expect(page.getByRole('heading', { level: 1 })).toHaveText(`Registration ${keyed.id} Active`);
  await expect(page.getByTestId('registration-auth-type')).toHaveText('Target API Token');
  await expectNothingShown(page, 'the registration screen reached from the created panel', all);

  // a write through the API, as an integration makes it: one webhook per registration
  const name = `Secret House ${suffix}`;
  const property = await api.createProperty(name);

  // the Basic Auth target received the credential, and the secret shown once signs the delivery
  await expect.poll(async () => (await target.deliveries()).length, { timeout: 60_000 }).toBe(1);
  const [delivery] = await target.deliveries();
  expect(delivery!.answeredStatus).toBe(200);
  expect(delivery!.body).toMatchObject({ entity: { id: property.id, name } });
  expect(delivery!.headers.authorization).toBe(`Basic ${basicValue}`);
  const basicWebhookId = delivery!.headers['webhook-id']!;
  expect(delivery!.headers['webhook-signature']).toBe(
    expectedSignature(
      basic.signingSecret,
      basicWebhookId,
      delivery!.headers['webhook-timestamp']!,
      delivery!.rawBody,
    ),
  );

  // the API-token target received the key with each of its attempts
  await expect
    .poll(async () => (await api.webhooksOf(keyed.id)).map((w) => w.state), { timeout: 60_000 })
    .toEqual([FAILED]);
  const [failed] = await api.webhooksOf(keyed.id);
  const keyWebhookId = String(failed!.id);
  const keyDeliveries = await keyTarget.deliveriesOf(failed!.id);
  expect(keyDeliveries).toHaveLength(RETRY_SCHEDULE_ATTEMPTS);
  for (const attempt of keyDeliveries) {
    expect(attempt.headers['x-api-key']).toBe(apiKey);
    expect(attempt.headers.authorization).toBeUndefined();
    expect(attempt.headers['webhook-signature']).toBe(
      expectedSignature(
        keyed.signingSecret,
        keyWebhookId,
        attempt.headers['webhook-timestamp']!,
        attempt.rawBody,
      ),
    );
  }

  /** Checks a screen as reached in the app, then again after a reload (every query fetched anew). */
  const check = async (screen: string, ready: () => Promise<void>) => {
    await ready();
    await expectNothingShown(page, screen, all);
    await snap(page, testInfo, `secrets-${screen.replace(/\W+/g, '-')}`);
    await page.reload();
    await ready();
    await expectNothingShown(page, `${screen}, reloaded`, all);
  };
  const h1 = page.getByRole('heading', { level: 1 });
  const webhookLink = (id: string) => page.getByRole('link', { name: `Webhook ${id}`, exact: true });
  const registrationLink = (id: number) =>
    page.getByRole('link', { name: `Registration ${id}`, exact: true });

  await openSection(page, 'Overview');
  await check('overview', async () => {
    await expect(page.getByTestId('metric-success-rate')).toBeVisible();
    await expect(page.getByTestId('metric-blocked-groups')).toBeVisible();
    await expect(page.getByTestId('attempts-chart')).toBeVisible();
  });

  await openSection(page, 'Registrations');
  await check('registrations', async () => {
    const table = page.getByTestId('registrations-table');
    await expect(table.getByRole('link', { name: `Registration ${basic.id}`, exact: true })).toBeVisible();
    await expect(table.getByRole('link', { name: `Registration ${keyed.id}`, exact: true })).toBeVisible();
    await expect(table).toContainText('Basic Auth');
    await expect(table).toContainText('Target API Token');
  });

  await registrationLink(basic.id).click();
  await check('Basic Auth registration', async () => {
    await expect(h1).toHaveText(`Registration ${basic.id} Active`);
    await expect(page.getByTestId('registration-auth-type')).toHaveText('Basic Auth');
    const row = page
      .getByTestId('recent-webhooks')
      .getByRole('row')
      .filter({ has: webhookLink(basicWebhookId) });
    await expect(row.getByTestId('webhook-state')).toHaveText('Successful');
  });

  await page
    .getByTestId('recent-webhooks')
    .getByRole('link', { name: `Webhook ${basicWebhookId}`, exact: true })
    .click();
  await check('delivered webhook of the Basic Auth registration', async () => {
    await expect(h1).toContainText(`Webhook ${basicWebhookId}`);
    await expect(h1.getByTestId('webhook-state')).toHaveText('Successful');
    await expect(page.getByTestId('attempt')).toHaveCount(1);
    await expect(page.getByTestId('attempt-status')).toHaveText('200');
    await expect(page.getByTestId('delivery-body')).toContainText(name);
    // the header is listed, its value masked
    await expect(page.getByTestId('delivery-headers')).toContainText('Basic ••••••••');
  });

  await openSection(page, 'Registrations');
  await registrationLink(keyed.id).click();
  await check('API-token registration', async () => {
    await expect(h1).toHaveText(`Registration ${keyed.id} Active`);
    await expect(page.getByTestId('registration-auth-type')).toHaveText('Target API Token');
    const row = page
      .getByTestId('recent-webhooks')
      .getByRole('row')
      .filter({ has: webhookLink(keyWebhookId) });
    await expect(row.getByTestId('webhook-state')).toHaveText('Failed');
  });

  await page
    .getByTestId('recent-webhooks')
    .getByRole('link', { name: `Webhook ${keyWebhookId}`, exact: true })
    .click();
  await check('failed webhook of the API-token registration', async () => {
    await expect(h1).toContainText(`Webhook ${keyWebhookId}`);
    await expect(h1.getByTestId('webhook-state')).toHaveText('Failed');
    await expect(page.getByTestId('attempt')).toHaveCount(RETRY_SCHEDULE_ATTEMPTS);
    await expect(page.getByTestId('attempt-status')).toHaveText(Array(RETRY_SCHEDULE_ATTEMPTS).fill('500'));
    await expect(page.getByTestId('delivery-body')).toContainText(name);
    await expect(page.getByTestId('delivery-headers')).toContainText('x-api-key••••••••');
  });

  await openSection(page, 'Webhooks');
  await check('webhooks', async () => {
    const table = page.getByTestId('webhooks-table');
    await expect(table.getByRole('link', { name: `Webhook ${basicWebhookId}`, exact: true })).toBeVisible();
    await expect(table.getByRole('link', { name: `Webhook ${keyWebhookId}`, exact: true })).toBeVisible();
    // the registration filter lists both registrations (with their target URLs)
    const options = page.locator('select[name="registrationId"] option');
    await expect(options.filter({ hasText: `#${basic.id} ${target.url}` })).toHaveCount(1);
    await expect(options.filter({ hasText: `#${keyed.id} ${keyTarget.url}` })).toHaveCount(1);
  });
  for (const [id, webhookId] of [
    [basic.id, basicWebhookId],
    [keyed.id, keyWebhookId],
  ] as const) {
    await page.goto(`/admin/webhooks?registrationId=${id}`);
    await check(`webhooks of registration ${id}`, async () => {
      await expect(page.getByTestId('webhook-row')).toHaveCount(1);
      await expect(webhookLink(webhookId)).toBeVisible();
    });
  }

  await openSection(page, 'Webhook groups');
  await check('blocked groups', async () => {
    const group = page
      .getByTestId('blocked-group')
      .filter({ has: page.getByRole('link', { name: `Blocking webhook ${keyWebhookId}`, exact: true }) });
    await expect(group).toContainText(`Property:${property.id}`);
    await expect(group.getByRole('link', { name: `Registration ${keyed.id}`, exact: true })).toBeVisible();
  });

  // a new form starts empty: nothing typed before comes back
  await openSection(page, 'Registrations');
  await page.getByRole('link', { name: 'New registration' }).click();
  await check('new registration form', async () => {
    await expect(h1).toHaveText('New registration');
    await expect(page.getByLabel('Target URL')).toHaveValue('');
  });

  // nor does the console keep them in its storage
  const storage = await page.evaluate(() =>
    [sessionStorage, localStorage]
      .flatMap((store) => Object.keys(store).map((key) => `${key}=${store.getItem(key)}`))
      .join('\n'),
  );
  expect(leaksIn({ 'browser storage': storage }, all)).toEqual([]);

  // every API answer the console read after creation: none carries a credential or a secret
  const answers = await Promise.all(responses);
  const read = answers.filter((answer) => answer.body !== null);
  expect(read.some((answer) => answer.url.includes(`/api/webhook-registrations/${basic.id}`))).toBe(true);
  expect(read.some((answer) => /\/api\/webhooks\/\d+\/attempts/.test(answer.url))).toBe(true);
  const leaks = read.flatMap((answer) =>
    leaksIn({ [answer.url]: answer.body! }, all).map((leak) => `${leak} (API response)`),
  );
  expect(leaks).toEqual([]);
  testInfo.annotations.push({
    type: 'checked',
    description: `${read.length} API responses read by the console (${answers.length - read.length} bodies unavailable)`,
  });
});
