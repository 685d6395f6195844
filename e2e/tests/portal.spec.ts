import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { ApiClient, OPERATOR, expect, signIn, snap, test } from '../fixtures/test';

/**
 * The endpoint portal (docs/portal.md) as a platform's customer meets it: a page on another origin
 * (a second 127.0.0.1 port) opens a portal session in an iframe. The customer sees only the
 * registration the session names, sends a test event, recovers its Failed webhook (its group then
 * delivered in order), and cannot read another party's registration or webhook by changing ids; a
 * read-only session shows no action and the API refuses every action; a revoked session shows a clear message in the same frame; a
 * session managing the whole party registers a new endpoint with the console's form.
 */

const FAILED = 4;
const SUCCESSFUL = 3;

/** The platform's own page, on another origin, framing `portalUrl`. */
async function embeddingPage(): Promise<{ server: Server; origin: string; show(url: string): void }> {
  let portalUrl = 'about:blank';
  const server = createServer((_request, response) => {
    response.setHeader('content-type', 'text/html; charset=utf-8');
    response.end(
      `<!doctype html><title>Customer platform</title><h1>Customer platform</h1>` +
        `<iframe id="portal" src="${portalUrl}" style="width:1200px;height:700px;border:0"></iframe>`,
    );
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const origin = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return { server, origin, show: (url) => void (portalUrl = url) };
}

interface Session {
  id: string;
  url: string;
  token: string;
}

test('a customer uses its embedded portal, and only its own', async ({
  page,
  api,
  target,
  baseURL,
}, testInfo) => {
  const embed = await embeddingPage();
  try {
    // the customer's endpoint fails first: its webhook ends Failed, and holds its group (grouped:
    // the changes of one property in order), so the two renames after it wait behind it
    await target.behave({ status: 500 });
    const { id: own } = await api.register(
      target.url,
      [
        { entityName: 'Property', type: 1 },
        { entityName: 'Property', type: 2 },
      ],
      { shouldGroup: true },
    );
    const property = await api.createProperty('Portalhof');
    await api.waitForStates(own, [FAILED]);
    const [failed] = await api.webhooksOf(own);
    await api.renameProperty(property.id, 'Portalhof (first name)');
    await api.renameProperty(property.id, 'Portalhof (second name)');
    await expect.poll(async () => (await api.webhooksOf(own)).length).toBe(3);
    // another registration of the same party, outside the session, and another party's
    const sibling = await api.createRegistration(`${target.url}/sibling`, [
      { entityName: 'Property', type: 2 },
    ]);
    const admin = await ApiClient.login(baseURL!, 'admin@example.com', OPERATOR.password);
    const foreign = await admin.createRegistration(`${target.url}/foreign`, [
      { entityName: 'Property', type: 1 },
    ]);
    const me = await api.request<{ partyId: number }>('GET', '/api/accounts/myself');

    const open = (actions: string[]) =>
      api.request<Session>('POST', '/api/webhook-portal/sessions', {
        partyId: me.partyId,
        registrationIds: [own],
        actions,
        expiresIn: '1h',
        allowedOrigins: [embed.origin],
        theme: { mode: 'dark', primaryColor: '#0f766e', title: 'Your webhooks' },
      });
    const session = await open(['test', 'recover']);
    embed.show(session.url);
    await page.goto(embed.origin);
    const portal = page.frameLocator('#portal');
    await expect(portal.getByRole('heading', { name: 'Your webhooks' })).toBeVisible();
    const registrations = portal.getByTestId('portal-registrations');
    await expect(registrations).toContainText(target.url);
    await expect(registrations).not.toContainText('/sibling');
    await expect(registrations).not.toContainText('/foreign');
    // no console navigation in the portal
    await expect(portal.getByRole('link', { name: 'Overview' })).toHaveCount(0);
    await snap(page, testInfo, 'portal-endpoints');

    // its deliveries, with the body and the attempts
    await registrations.getByRole('button', { name: target.url }).click();
    await portal
      .getByTestId('portal-webhooks')
      .getByRole('button', { name: String(failed!.id) })
      .click();
    await expect(portal.getByTestId('portal-webhook-body')).toContainText('"entityName": "Property"');
    await expect(portal.getByTestId('portal-webhook')).toContainText('Failed');
    await portal.getByRole('button', { name: '← Back' }).click();

    // the endpoint is fixed: a test event, then a recover of the Failed webhook
    await target.behave({ status: 200 });
    await portal.getByTestId('portal-test').click();
    await expect(portal.getByTestId('portal-test-result')).toContainText('Delivered (200)');
    await portal.getByTestId('portal-recover').click();
    await expect(portal.getByTestId('portal-recover-result')).toContainText('Recovering');
    await api.waitForStates(own, [SUCCESSFUL, SUCCESSFUL, SUCCESSFUL]);
    // the group in its order: the recovered creation first, then the renames it held
    const accepted = (await target.deliveries()).filter(
      (delivery) =>
        delivery.answeredStatus === 200 &&
        (delivery.body as { entity?: { id?: number } }).entity?.id === property.id &&
        delivery.headers['x-webhook-test'] === undefined,
    );
    expect(accepted.map((delivery) => (delivery.body as { entity: { name: string } }).entity.name)).toEqual([
      'Portalhof',
      'Portalhof (first name)',
      'Portalhof (second name)',
    ]);
    await snap(page, testInfo, 'portal-recovered');

    // changing ids in requests reaches nothing outside the session
    const asPortal = (path: string, method = 'GET') =>
      fetch(`${baseURL}${path}`, { method, headers: { authorization: `Bearer ${session.token}` } });
    expect((await asPortal(`/api/webhook-registrations/${sibling}`)).status).toBe(404);
    expect((await asPortal(`/api/webhook-registrations/${foreign}`)).status).toBe(404);
    expect((await asPortal(`/api/webhook-registrations/${foreign}/test`, 'POST')).status).toBe(404);
    expect((await asPortal('/api/webhook-groups?blocked=true')).status).toBe(403);

    // a read-only session: no action buttons, and the API refuses the actions
    const readOnly = await open([]);
    embed.show(readOnly.url);
    await page.goto(embed.origin);
    await portal.getByTestId('portal-registrations').getByRole('button', { name: target.url }).click();
    await expect(portal.getByTestId('portal-registration')).toBeVisible();
    await expect(portal.getByTestId('portal-actions').getByRole('button')).toHaveCount(0);
    for (const path of [
      `/api/webhook-registrations/${own}/test`,
      `/api/webhook-registrations/${own}/recover`,
      `/api/webhook-registrations/${own}/rotate-secret`,
      `/api/webhook-registrations/${own}/pause`,
      `/api/webhooks/${failed!.id}/retry`,
      '/api/webhook-registrations',
    ]) {
      const refused = await fetch(`${baseURL}${path}`, {
        method: 'POST',
        headers: { authorization: `Bearer ${readOnly.token}`, 'content-type': 'application/json' },
        body: '{}',
      });
      expect(refused.status, path).toBe(403);
    }

    expect(await portal.getByRole('button', { name: 'Edit URL and rate limit' }).count()).toBe(0);

    // a session that may manage edits the endpoint's rate limit in place
    const managing = await open(['manage']);
    embed.show(managing.url);
    await page.goto(embed.origin);
    await portal.getByTestId('portal-registrations').getByRole('button', { name: target.url }).click();
    await portal.getByRole('button', { name: 'Edit URL and rate limit' }).click();
    await portal.getByLabel('Rate limit (optional)').fill('5');
    await portal.getByRole('button', { name: 'Save' }).click();
    await expect(portal.getByTestId('registration-rate-limit')).toHaveText('At most 5/s');
    expect(
      (await api.request<{ rateLimit: number | null }>('GET', `/api/webhook-registrations/${own}`)).rateLimit,
    ).toBe(5);

    // revoked: the same frame says the session ended
    await api.request('DELETE', `/api/webhook-portal/sessions/${readOnly.id}`);
    embed.show(readOnly.url);
    await page.goto(embed.origin);
    await expect(portal.getByTestId('portal-ended')).toContainText('This webhook portal session has ended');
    await snap(page, testInfo, 'portal-ended');
    await admin.cleanUp();
  } finally {
    await new Promise((resolve) => embed.server.close(resolve));
  }
});

test('an operator opens a party’s portal from its registration page; the console shows the event catalog', async ({
  page,
  api,
  target,
}, testInfo) => {
  const id = await api.createRegistration(target.url, [{ entityName: 'Unit', type: 2 }]);
  await signIn(page, `/admin/registrations/${id}`);
  const opened = page.waitForEvent('popup');
  await page.getByTestId('open-portal').click();
  const portal = await opened;
  // what the customer sees: its registrations, read-only
  await expect(portal.getByTestId('portal-registrations')).toContainText(target.url);
  await portal.getByTestId('portal-registrations').getByRole('button', { name: target.url }).click();
  await expect(portal.getByTestId('portal-registration')).toBeVisible();
  await expect(portal.getByTestId('portal-actions').getByRole('button')).toHaveCount(0);
  await portal.getByRole('button', { name: 'Event catalog' }).click();
  await expect(portal.getByTestId('event-type').first()).toBeVisible();
  await portal.close();

  await page.getByRole('link', { name: 'Event catalog' }).click();
  const unitUpdated = page.getByTestId('event-type').filter({ hasText: 'Unit.Updated' });
  await unitUpdated.locator('summary').click();
  await expect(unitUpdated).toContainText('"entityName": "Unit"');
  await snap(page, testInfo, 'console-event-catalog');
});

test('a session allowed to manage and rotate shows those actions, and they act on its registration', async ({
  page,
  api,
  target,
}) => {
  const embed = await embeddingPage();
  try {
    const id = await api.createRegistration(target.url, [{ entityName: 'Property', type: 2 }]);
    const me = await api.request<{ partyId: number }>('GET', '/api/accounts/myself');
    const session = await api.request<Session>('POST', '/api/webhook-portal/sessions', {
      partyId: me.partyId,
      registrationIds: [id],
      actions: ['rotate-secret', 'manage'],
      expiresIn: '30m',
      allowedOrigins: [embed.origin],
    });
    embed.show(session.url);
    await page.goto(embed.origin);
    const portal = page.frameLocator('#portal');
    await portal.getByTestId('portal-registrations').getByRole('button', { name: target.url }).click();
    const actions = portal.getByTestId('portal-actions');
    await expect(actions.getByTestId('portal-test')).toHaveCount(0);
    await expect(actions.getByTestId('portal-recover')).toHaveCount(0);
    await actions.getByTestId('portal-rotate-secret').click();
    await expect(portal.getByTestId('portal-new-secret')).toContainText('whsec_');
    await actions.getByTestId('portal-pause').click();
    await expect
      .poll(
        async () => (await api.request<{ status: string }>('GET', `/api/webhook-registrations/${id}`)).status,
      )
      .toBe('paused');
  } finally {
    await new Promise((resolve) => embed.server.close(resolve));
  }
});

test('a session managing the whole party registers a new endpoint in the embedded portal; others cannot', async ({
  page,
  api,
  target,
  baseURL,
}, testInfo) => {
  const embed = await embeddingPage();
  try {
    const existing = await api.createRegistration(target.url, [{ entityName: 'Property', type: 1 }]);
    const me = await api.request<{ partyId: number }>('GET', '/api/accounts/myself');
    const open = (actions: string[], registrationIds?: number[]) =>
      api.request<Session>('POST', '/api/webhook-portal/sessions', {
        partyId: me.partyId,
        ...(registrationIds ? { registrationIds } : {}),
        actions,
        expiresIn: '1h',
        allowedOrigins: [embed.origin],
      });
    const portal = page.frameLocator('#portal');
    const show = async (session: Session) => {
      embed.show(session.url);
      await page.goto(embed.origin);
      await expect(portal.getByTestId('portal-registrations')).toContainText(target.url);
    };

    // a read-only session over the whole party, and a managing one limited to a registration:
    // no form, and the API refuses the create
    const newUrl = `${target.url}/from-portal`;
    const body = {
      targetUrl: newUrl,
      enabledEvents: [{ entityName: 'Unit', type: 2 }],
      targetAuthorization: { type: 0 },
    };
    for (const session of [await open([]), await open(['manage'], [existing])]) {
      await show(session);
      await expect(portal.getByTestId('portal-create-registration')).toHaveCount(0);
      const refused = await fetch(`${baseURL}/api/webhook-registrations`, {
        method: 'POST',
        headers: { authorization: `Bearer ${session.token}`, 'content-type': 'application/json' },
        body: JSON.stringify(body),
      });
      expect(refused.status).toBe(403);
    }

    // a managing session over the whole party: the console's form, its checks, then the secret
    await show(await open(['manage']));
    await portal.getByTestId('portal-create-registration').click();
    const form = portal.getByRole('form', { name: 'New registration' });
    await form.getByRole('button', { name: 'Create registration' }).click();
    await expect(portal.getByTestId('form-errors')).toContainText('fields need attention');
    await expect(form.getByLabel('Party id (optional)')).toHaveCount(0);
    await form.getByLabel('Target URL').fill(newUrl);
    await portal
      .getByTestId('events-picker')
      .getByRole('checkbox', { name: 'Unit Updated', exact: true })
      .check();
    await form.getByLabel('Rate limit (optional)').fill('3');
    await form.getByRole('button', { name: 'Create registration' }).click();
    await expect(portal.getByTestId('signing-secret')).toContainText('whsec_');
    await snap(page, testInfo, 'portal-registration-created');
    await portal.getByRole('button', { name: 'Back to endpoints' }).click();
    const registrations = portal.getByTestId('portal-registrations');
    await expect(registrations).toContainText(newUrl);
    await expect(registrations).toContainText('Unit.2');

    // it is the party's, as the customer typed it
    const list = await api.request<{
      items: { id: number; targetUrl: string; partyId: number; rateLimit: number | null }[];
    }>('GET', '/api/webhook-registrations?PageSize=100&SortByAttributeName=id&AscendingOrder=false');
    const created = list.items.filter((registration) => registration.targetUrl === newUrl);
    expect(created).toHaveLength(1);
    api.cleanUpRegistration(created[0]!.id);
    expect(created[0]).toMatchObject({ partyId: me.partyId, rateLimit: 3 });
  } finally {
    await new Promise((resolve) => embed.server.close(resolve));
  }
});

test('an expired portal session shows the same clear message in its frame, and its token is refused', async ({
  page,
  api,
  target,
  baseURL,
}, testInfo) => {
  test.setTimeout(150_000);
  const embed = await embeddingPage();
  try {
    const own = await api.createRegistration(target.url, [{ entityName: 'Property', type: 1 }]);
    const me = await api.request<{ partyId: number }>('GET', '/api/accounts/myself');
    // the shortest session there is: one minute
    const session = await api.request<Session & { expiresAt: string }>(
      'POST',
      '/api/webhook-portal/sessions',
      {
        partyId: me.partyId,
        registrationIds: [own],
        actions: ['read'],
        expiresIn: '1m',
        allowedOrigins: [embed.origin],
      },
    );
    embed.show(session.url);
    await page.goto(embed.origin);
    const portal = page.frameLocator('#portal');
    await expect(portal.getByTestId('portal-registrations')).toContainText(target.url);

    // past its end, nobody having revoked it
    const left = Date.parse(session.expiresAt) - Date.now();
    await page.waitForTimeout(Math.max(left, 0) + 1_500);
    const refused = await fetch(`${baseURL}/api/webhook-registrations/${own}`, {
      headers: { authorization: `Bearer ${session.token}` },
    });
    expect(refused.status).toBe(401);
    await page.goto(embed.origin);
    await expect(portal.getByTestId('portal-ended')).toContainText('This webhook portal session has ended');
    await snap(page, testInfo, 'portal-expired');
  } finally {
    await new Promise((resolve) => embed.server.close(resolve));
  }
});
