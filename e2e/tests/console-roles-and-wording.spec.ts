import { expect, signIn, snap, test, VIEWER, type ApiClient } from '../fixtures/test';
import type { TargetClient } from '../fixtures/webhook-target';

/** Issue 30 items 10 (a read-only account) and 11 (wording). */

const FAILED = 4;
const RESOLVED = 7;

/** A grouping registration whose one webhook failed: one blocked group, one Failed row. */
async function oneFailed(api: ApiClient, target: TargetClient) {
  await target.behave({ status: 500 });
  const { id } = await api.register(target.url, [{ entityName: 'Property', type: 1 }], { shouldGroup: true });
  await api.createProperty(`Worded House ${Date.now()}`);
  await api.waitForStates(id, [FAILED]);
  const [webhook] = await api.webhooksOf(id);
  return { registrationId: id, webhookId: webhook!.id };
}

test('a read-only account gets no create form and no row checkboxes it could not use', async ({
  page,
  api,
  target,
}, testInfo) => {
  const { registrationId } = await oneFailed(api, target);

  await signIn(page, '/admin/registrations/new', VIEWER);
  await expect(page.getByTestId('create-not-allowed')).toContainText('WebhookRegistration.Create');
  await expect(page.getByLabel('Target URL')).toHaveCount(0);
  await expect(page.getByRole('button', { name: 'Create registration' })).toHaveCount(0);
  await snap(page, testInfo, 'viewer-create');

  await page.goto(`/admin/webhooks?registrationId=${registrationId}`);
  await expect(page.getByTestId('webhook-row')).toHaveCount(1);
  await expect(page.getByTestId('action-disabled-reason')).toBeVisible();
  await expect(page.getByTestId('webhooks-table').getByRole('checkbox')).toHaveCount(0);
  await expect(page.getByTestId('selected-count')).toHaveCount(0);
  await snap(page, testInfo, 'viewer-webhooks');

  await page.goto(`/admin/webhook-groups?registrationId=${registrationId}`);
  await expect(page.getByTestId('blocked-group')).toHaveCount(1);
  await expect(page.getByTestId('blocked-groups-table').getByRole('checkbox')).toHaveCount(0);
  await expect(page.getByTestId('action-disabled-reason')).toBeVisible();
});

test('wording: not found offers no retry, a 409 names the state, the audit trail names people', async ({
  page,
  api,
  target,
}, testInfo) => {
  const { registrationId, webhookId } = await oneFailed(api, target);

  // a webhook and a registration that do not exist: said, and no "Try again" that cannot help
  await signIn(page, '/admin/webhooks/2000000000');
  await expect(page.getByTestId('error-state')).toBeVisible();
  await expect(page.getByRole('button', { name: 'Try again' })).toHaveCount(0);
  await page.goto('/admin/registrations/2000000000');
  await expect(page.getByTestId('error-state')).toBeVisible();
  await expect(page.getByRole('button', { name: 'Try again' })).toHaveCount(0);

  // the state moved on behind the page's back: the refusal names it, without its number
  await page.goto(`/admin/webhooks/${webhookId}`);
  await expect(page.getByTestId('webhook-state')).toHaveText('Failed');
  await api.request('POST', `/api/webhooks/${webhookId}/resolve`);
  await api.waitForStates(registrationId, [RESOLVED]);
  await page.getByRole('button', { name: 'Resolve', exact: true }).click();
  await page.getByRole('dialog').getByRole('button', { name: 'Resolve webhook' }).click();
  const refusal = page.getByTestId('toast-error');
  await expect(refusal).toContainText(`Webhook ${webhookId} is Resolved, a final state`);
  await expect(refusal).not.toContainText('(7)');
  await snap(page, testInfo, 'conflict-wording');

  // an unfiltered dry run: its filter says it covers every webhook
  const dryRun = await api.request<{ id: number }>('POST', '/api/webhooks/bulk', {
    action: 'abort',
    filter: {},
    dryRun: true,
  });
  await page.goto('/admin/operator-actions?action=webhooks.bulk-abort');
  const entry = page
    .getByTestId('audit-entry')
    .filter({ has: page.getByRole('link', { name: `Operation ${dryRun.id}`, exact: true }) });
  await expect(entry.getByTestId('audit-filter')).toContainText('all webhooks (no filter)');
  await snap(page, testInfo, 'all-webhooks-filter');
});

test('wording: the audit trail shows another account of the party by its email', async ({
  page,
  api,
  target,
}) => {
  const { registrationId, webhookId } = await oneFailed(api, target);
  await api.request('POST', `/api/webhooks/${webhookId}/abort`);

  // the viewer reads what the manager did: the manager's email, not "Account 2"
  await signIn(page, `/admin/operator-actions?registrationId=${registrationId}&action=webhook.abort`, VIEWER);
  const entry = page.getByTestId('audit-entry');
  await expect(entry).toHaveCount(1);
  await expect(entry.getByTestId('audit-actor-email')).toHaveText('manager@example.com');
  // and the webhook's last action says the same person, not "by account 2"
  await page.goto(`/admin/webhooks?registrationId=${registrationId}`);
  await expect(page.getByTestId('webhook-last-action')).toHaveText('aborted by manager@example.com');
  await page.goto(`/admin/webhooks/${webhookId}`);
  await expect(page.getByTestId('webhook-last-action')).toContainText('aborted by manager@example.com');
});

test('wording: one blocked group, its registration filter in the address', async ({
  page,
  api,
  target,
}, testInfo) => {
  // two registrations of one property change: one blocked group each
  await target.behave({ status: 500 });
  const events = [{ entityName: 'Property', type: 1 }];
  const { id: registrationId } = await api.register(target.url, events, { shouldGroup: true });
  const other = { registrationId: (await api.register(target.url, events, { shouldGroup: true })).id };
  await api.createProperty(`Grouped House ${Date.now()}`);
  await api.waitForStates(registrationId, [FAILED]);
  await api.waitForStates(other.registrationId, [FAILED]);

  await signIn(page, `/admin/webhook-groups?registrationId=${registrationId}`);
  await expect(page.getByTestId('blocked-group')).toHaveCount(1);
  await expect(page.getByTestId('pagination-status')).toHaveText('1 blocked group');
  await expect(page.getByRole('combobox', { name: 'Registration' })).toHaveValue(String(registrationId));

  // choosing another registration writes it into the address, so the view can be linked
  await page.getByRole('combobox', { name: 'Registration' }).selectOption(String(other.registrationId));
  await expect(page).toHaveURL(new RegExp(`/admin/webhook-groups\\?registrationId=${other.registrationId}$`));
  await expect(page.getByTestId('blocked-group')).toHaveCount(1);
  await page.goBack();
  await expect(page.getByRole('combobox', { name: 'Registration' })).toHaveValue(String(registrationId));
  await snap(page, testInfo, 'one-blocked-group');
});

test('wording: a server error shows its trace id', async ({ page }) => {
  // the API cannot be made to fail on demand, so the browser gets its 500 ProblemDetails as the
  // API's error handler writes it (apps/api/src/http/error-middleware.ts)
  await page.route('**/api/webhook-stats*', (route) =>
    route.fulfill({
      status: 500,
      contentType: 'application/problem+json',
      headers: { 'x-request-id': 'trace-e2e-500' },
      body: JSON.stringify({
        type: 'https://httpstatuses.io/500',
        title: 'Internal server error',
        status: 500,
        detail: 'Internal server error',
        instance: '/api/webhook-stats',
        traceId: 'trace-e2e-500',
      }),
    }),
  );
  await signIn(page, '/admin/');
  const error = page.getByTestId('error-state');
  await expect(error).toContainText('trace id trace-e2e-500', { timeout: 60_000 });
  // a server error may pass: asking again is offered
  await expect(error.getByRole('button', { name: 'Try again' })).toBeVisible();
});

test('a bad link says what it could not read on every filtered list, not only the webhooks table', async ({
  page,
}, testInfo) => {
  await signIn(page, '/admin/webhook-groups?registrationId=abc&page=0');
  const notice = page.getByTestId('bad-link');
  await expect(notice).toContainText('registrationId "abc" (not a registration id)');
  await expect(notice).toContainText('page "0" (not a page number)');
  await snap(page, testInfo, 'bad-link-groups');
  await notice.getByRole('link', { name: 'Show the address as read' }).click();
  await expect(page).toHaveURL(/\/admin\/webhook-groups$/);
  await expect(page.getByTestId('bad-link')).toHaveCount(0);

  await page.goto('/admin/webhook-issues?pageSize=7&registrationId=-1');
  await expect(notice).toContainText('pageSize "7" (one of 20, 50, 100)');
  await expect(notice).toContainText('registrationId "-1"');

  await page.goto('/admin/operator-actions?action=bogus&accountId=me');
  await expect(notice).toContainText('action "bogus"');
  await expect(notice).toContainText('accountId "me" (not an account id)');
  await page.goto('/admin/operator-actions?action=webhook.abort');
  await expect(page.getByRole('heading', { level: 1 })).toContainText('Operator actions');
  await expect(page.getByTestId('bad-link')).toHaveCount(0);
});
