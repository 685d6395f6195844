import { expect, FAILED, signIn, snap, SUCCESSFUL, test } from '../fixtures/test';

const CHANGES = 3;

test('bulk retry from a filter: a dry run counts, the operator confirms, the progress bar reaches done, and every webhook is delivered', async ({
  page,
  api,
  target,
}, testInfo) => {
  // a target that fails every attempt: the webhooks of three changes end Failed
  const { registrationId, webhooks } = await api.endedWebhooks(target, {
    status: 500,
    count: CHANGES,
    name: 'Bulk House',
  });

  // the table, filtered to the registration through the address and to Failed through the form
  await signIn(page, `/admin/webhooks?registrationId=${registrationId}`);
  const filters = page.getByRole('search', { name: 'Filter webhooks' });
  await filters.getByLabel('State').selectOption({ label: 'Failed' });
  await filters.getByRole('button', { name: 'Apply filters' }).click();
  await expect(page).toHaveURL(new RegExp(`state=${FAILED}`));
  const rows = page.getByTestId('webhook-row');
  await expect(rows).toHaveCount(CHANGES);
  await expect(rows.getByTestId('webhook-state')).toHaveText(Array(CHANGES).fill('Failed'));
  // the table shows where each goes and how its last attempt ended
  await expect(rows.first().getByTestId('webhook-target-url')).toHaveText(target.url);
  await expect(rows.first().getByTestId('webhook-last-status')).toHaveText('500');
  await expect(rows.first().getByTestId('webhook-last-error')).toHaveText('status');
  await snap(page, testInfo, 'bulk-failed-filtered');

  // the target works again; retry everything the filter matches
  await target.behave({ status: 200 });
  await page.getByRole('button', { name: 'Retry all matching…' }).click();
  const dialog = page.getByRole('dialog', { name: 'Retry every webhook matching the filters?' });
  await expect(dialog).toBeVisible();
  await expect(dialog).toContainText(`registration ${registrationId}`);
  // the dry run first: what would change, what would be skipped
  await expect(dialog.getByTestId('operation-count')).toHaveText(
    `${CHANGES} selected, ${CHANGES} would change, 0 skipped.`,
  );
  await snap(page, testInfo, 'bulk-dry-run');
  await dialog.getByRole('checkbox', { name: /Fresh schedule/ }).check();
  await dialog.getByRole('button', { name: `Retry ${CHANGES} webhooks` }).click();

  // the progress bar follows the operation until it is done
  const progress = dialog.getByTestId('operation-progress');
  await expect(progress).toHaveAttribute('data-state', 'done', { timeout: 60_000 });
  const bar = progress.getByRole('progressbar');
  await expect(bar).toHaveAttribute('aria-valuenow', String(CHANGES));
  await expect(bar).toHaveAttribute('aria-valuemax', String(CHANGES));
  await expect(progress.getByTestId('operation-summary')).toHaveText(
    `Done: ${CHANGES} webhooks selected, ${CHANGES} retried.`,
  );
  await snap(page, testInfo, 'bulk-done');
  await dialog.getByRole('button', { name: 'Close' }).click();
  await expect(dialog).toBeHidden();

  // every webhook is delivered: the target answered 200 to each once more
  for (const webhook of webhooks) {
    await expect
      .poll(async () => (await target.deliveriesOf(webhook.id)).map((d) => d.answeredStatus).at(-1), {
        timeout: 60_000,
      })
      .toBe(200);
  }
  await api.waitForStates(registrationId, Array(CHANGES).fill(SUCCESSFUL));

  // the filtered table empties (nothing Failed is left); without the state filter all are Successful
  await expect(rows).toHaveCount(0, { timeout: 30_000 });
  await page.goto(`/admin/webhooks?registrationId=${registrationId}`);
  await expect(rows.getByTestId('webhook-state')).toHaveText(Array(CHANGES).fill('Successful'));
  await expect(rows.first().getByTestId('webhook-last-action')).toContainText('retried (bulk)');
  await snap(page, testInfo, 'bulk-delivered');
});
