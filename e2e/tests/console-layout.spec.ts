import type { Page } from '@playwright/test';
import { expect, signIn, snap, test, type ApiClient } from '../fixtures/test';
import type { TargetClient } from '../fixtures/webhook-target';

/**
 * Issue 30 item 9: no console page scrolls sideways, at a desktop and at a phone size. Every
 * screen of the route table (apps/admin/src/app/route-table.ts) is visited with data in it;
 * screenshots are attached to the report (no committed baselines: the suite has none).
 */

const FAILED = 4;

const SIZES = [
  { name: 'desktop', width: 1440, height: 900 },
  { name: 'phone', width: 390, height: 844 },
] as const;

/** A failing registration (a blocked group, a triage line) and a delivered one, and an operation. */
async function seed(api: ApiClient, target: TargetClient) {
  await target.behave({ status: 500 });
  const failing = await api.register(`${target.url}`, [{ entityName: 'Property', type: 1 }], {
    shouldGroup: true,
  });
  for (let index = 0; index < 2; index++) await api.createProperty(`Wide House ${index} ${Date.now()}`);
  await expect.poll(() => api.statesOf(failing.id), { timeout: 60_000 }).toContain(FAILED);
  const [webhook] = await api.webhooksOf(failing.id);
  const operation = await api.request<{ id: number }>('POST', '/api/webhooks/bulk', {
    action: 'resolve',
    filter: { registrationId: failing.id },
    dryRun: true,
  });
  return { registrationId: failing.id, webhookId: webhook!.id, operationId: operation.id };
}

/** The screen's heading is shown and nothing is loading any more. */
async function settled(page: Page): Promise<void> {
  await expect(page.getByRole('heading', { level: 1 })).toBeVisible();
  await expect(page.locator('main .loading')).toHaveCount(0);
}

/** Neither the page nor any table's wrapper scrolls sideways. */
async function expectNoSidewaysScroll(page: Page, screen: string): Promise<void> {
  const widths = await page.evaluate(() => ({
    page: document.documentElement.scrollWidth,
    viewport: window.innerWidth,
    // what sticks out, to say in the failure
    wide: Array.from(document.querySelectorAll<HTMLElement>('main *'))
      .filter((element) => element.getBoundingClientRect().right > window.innerWidth + 0.5)
      .slice(-3)
      .map(
        (element) =>
          `${element.tagName.toLowerCase()}.${element.className} "${element.textContent?.slice(0, 40)}"`,
      ),
    tables: Array.from(document.querySelectorAll<HTMLElement>('.table-wrap')).map((wrap) => ({
      scroll: wrap.scrollWidth,
      client: wrap.clientWidth,
    })),
  }));
  expect
    .soft(widths.page, `${screen}: page width (${widths.wide.join('; ')})`)
    .toBeLessThanOrEqual(widths.viewport);
  for (const table of widths.tables) {
    expect.soft(table.scroll, `${screen}: table width`).toBeLessThanOrEqual(table.client);
  }
}

/** Whether an element lies fully inside the viewport's width. */
async function insideViewport(page: Page, selector: ReturnType<Page['locator']>): Promise<boolean> {
  const box = await selector.boundingBox();
  const width = await page.evaluate(() => window.innerWidth);
  return box !== null && box.x >= 0 && box.x + box.width <= width;
}

for (const size of SIZES) {
  test.describe(`at ${size.width}×${size.height}`, () => {
    test.use({ viewport: { width: size.width, height: size.height } });

    test(`no console screen scrolls sideways (${size.name})`, async ({ page, api, target }, testInfo) => {
      const { registrationId, webhookId, operationId } = await seed(api, target);
      const screens: [string, string][] = [
        ['overview', '/admin/'],
        ['webhooks', '/admin/webhooks'],
        ['webhook', `/admin/webhooks/${webhookId}`],
        ['registrations', '/admin/registrations'],
        ['registration-new', '/admin/registrations/new'],
        ['registration', `/admin/registrations/${registrationId}`],
        ['webhook-groups', '/admin/webhook-groups'],
        ['webhook-issues', '/admin/webhook-issues'],
        ['operator-actions', '/admin/operator-actions'],
        ['webhook-operation', `/admin/webhook-operations/${operationId}`],
        ['event-catalog', '/admin/webhook-event-types'],
        ['not-found', '/admin/no-such-screen'],
      ];
      await signIn(page, '/admin/');
      for (const [name, path] of screens) {
        await page.goto(path);
        await settled(page);
        await snap(page, testInfo, `layout-${size.name}-${name}`);
        await expectNoSidewaysScroll(page, name);
      }

      // the webhooks table keeps its last columns on screen
      await page.goto(`/admin/webhooks?registrationId=${registrationId}`);
      await settled(page);
      await expect(page.getByTestId('webhook-row').first()).toBeVisible();
      if (size.name === 'desktop') {
        for (const column of ['Next attempt', 'Created']) {
          const header = page.getByRole('columnheader', { name: column });
          await expect(header).toBeVisible();
          expect(await insideViewport(page, header), `${column} on screen`).toBe(true);
        }
      }
      // the target URL breaks after its host, never inside it
      const url = page.getByTestId('webhook-target-url').first();
      const host = url.locator('.url__host');
      await expect(host).toHaveText(new URL(target.url).host);
      const hostLines = await host.evaluate((element) => element.getClientRects().length);
      expect(hostLines, 'the host is on one line').toBe(1);

      // blocked groups: every button on screen
      await page.goto(`/admin/webhook-groups?registrationId=${registrationId}`);
      await settled(page);
      await expect(page.getByTestId('blocked-group').first()).toBeVisible();
      const buttons = page.locator('main button:visible');
      for (let index = 0; index < (await buttons.count()); index++) {
        const button = buttons.nth(index);
        const clipped = await button.evaluate(
          (element) =>
            element.scrollWidth > element.clientWidth + 1 ||
            element.getBoundingClientRect().right > window.innerWidth,
        );
        expect(clipped, `button "${await button.innerText()}" is cut`).toBe(false);
      }
      await snap(page, testInfo, `layout-${size.name}-webhook-groups-filtered`);
    });
  });
}

test('a disabled primary button looks disabled', async ({ page }) => {
  await signIn(page, '/admin/registrations/new');
  await settled(page);
  // the same class as an enabled one, disabled by the browser: it must not look enabled
  const looks = await page.evaluate(() => {
    const make = (disabled: boolean) => {
      const button = document.createElement('button');
      button.className = 'button button--primary';
      button.textContent = 'Probe';
      button.disabled = disabled;
      document.querySelector('main')!.append(button);
      const style = getComputedStyle(button);
      const look = { background: style.backgroundColor, opacity: style.opacity, cursor: style.cursor };
      button.remove();
      return look;
    };
    return { enabled: make(false), disabled: make(true) };
  });
  expect(looks.disabled.cursor).toBe('not-allowed');
  expect(looks.disabled.background).not.toBe(looks.enabled.background);
});
