import { expect, OPERATOR, test, type ApiClient } from '../fixtures/test';
import type { Locator, Page } from '@playwright/test';
import type { TargetClient } from '../fixtures/webhook-target';

/**
 * Issue 30's "every page reached by a keyboard alone": after the first load, no click and no
 * `page.goto`, only `page.keyboard` (Tab, Shift+Tab, Enter, Space, Escape and the console's own
 * keys). Every element focus lands on by Tab shows a focus indicator (docs/admin.md › Accessibility).
 */

/** The console's navigation (`NAVIGATION` in apps/admin/src/app/shell.tsx) and each screen's `h1`. */
const SCREENS = [
  ['Overview', 'Overview'],
  ['Webhooks', 'Webhooks'],
  ['Registrations', 'Registrations'],
  ['Webhook groups', 'Webhook groups (blocked)'],
  ['Webhook issues', 'Webhook issues (triage)'],
  ['Operator actions', 'Operator actions (audit trail)'],
  ['Event catalog', 'Event catalog'],
] as const;

/** What has focus: its tag, text, and whether it shows a focus ring (an outline or a box shadow). */
function focused(page: Page) {
  return page.evaluate(() => {
    const element = document.activeElement;
    if (!(element instanceof HTMLElement) || element === document.body) return null;
    const style = getComputedStyle(element);
    const box = element.getBoundingClientRect();
    return {
      what: `${element.tagName.toLowerCase()} "${(element.textContent ?? '').trim().slice(0, 60)}"`,
      inMain: Boolean(element.closest('main')),
      ring:
        (style.outlineStyle !== 'none' && parseFloat(style.outlineWidth) >= 2) || style.boxShadow !== 'none',
      onScreen: box.width > 0 && box.height > 0 && box.bottom > 0 && box.top < window.innerHeight,
    };
  });
}

/** Focus is on an element that shows it (a ring, on screen). */
async function expectVisibleFocus(page: Page): Promise<void> {
  const now = await focused(page);
  expect(now, 'something has focus').not.toBeNull();
  expect(now!.ring, `${now!.what} shows a focus ring`).toBe(true);
  expect(now!.onScreen, `${now!.what} is on screen`).toBe(true);
}

/**
 * Presses `key` (Tab or Shift+Tab) until `target` has focus, each stop on the way showing its
 * focus: a control Tab never reaches (a `div` with a click handler) fails here, and so does one
 * whose focus does not show.
 */
async function tabTo(
  page: Page,
  target: Locator,
  key: 'Tab' | 'Shift+Tab' = 'Tab',
  most = 60,
): Promise<void> {
  const handle = await target.elementHandle();
  let wrapped = false;
  for (let press = 0; press < most; press++) {
    await page.keyboard.press(key);
    // past the first or last control focus leaves the document (the browser's own UI), once
    if (!wrapped && (await focused(page)) === null) {
      wrapped = true;
      continue;
    }
    await expectVisibleFocus(page);
    if (await handle!.evaluate((element) => element === document.activeElement)) return;
  }
  throw new Error(`${key} × ${most} never reached ${target.toString()}`);
}

/** Presses j until `link` (a row's first link) has focus: the list may hold other rows first. */
async function jTo(page: Page, link: Locator): Promise<void> {
  for (let press = 0; press < 25; press++) {
    await page.keyboard.press('j');
    if (await link.evaluate((element) => element === document.activeElement)) return;
  }
  throw new Error(`j never reached ${link.toString()}`);
}

async function expectFocused(locator: Locator): Promise<void> {
  await expect(locator).toBeFocused();
  await expectVisibleFocus(locator.page());
}

/** Signs in by keyboard alone: the email field has focus, then Tab, the password and Enter. */
async function signInByKeyboard(page: Page): Promise<void> {
  await page.goto('/admin/');
  await expect(page.getByRole('heading', { name: 'Sign in to the operator console' })).toBeVisible();
  await expect(page.getByLabel('Email')).toBeFocused();
  await page.keyboard.type(OPERATOR.email);
  await page.keyboard.press('Tab');
  await expect(page.getByLabel('Password')).toBeFocused();
  await page.keyboard.type(OPERATOR.password);
  await page.keyboard.press('Enter');
  await expect(page.getByTestId('signed-in-account')).toContainText(OPERATOR.email);
}

/** A Successful webhook of a registration of the test's own. */
async function oneWebhook(api: ApiClient, target: TargetClient) {
  const { registrationId, webhooks } = await api.endedWebhooks(target, {
    status: 200,
    count: 1,
    name: 'Keyboard House',
  });
  return { registrationId, webhookId: webhooks[0]!.id };
}

test('every screen of the navigation, a webhook and a registration, by keyboard alone, focus always visible', async ({
  page,
  api,
  target,
}) => {
  const { registrationId, webhookId } = await oneWebhook(api, target);
  await signInByKeyboard(page);
  const main = page.locator('main');
  const nav = page.getByRole('navigation', { name: 'Main' });
  const h1 = page.getByRole('heading', { level: 1 });

  // the skip link is the first stop, shows itself, and moves focus to the screen past the navigation
  await page.keyboard.press('Tab');
  const skip = page.getByRole('link', { name: 'Skip to content' });
  await expectFocused(skip);
  await page.keyboard.press('Enter');
  await expect(main).toBeFocused();
  await page.keyboard.press('Tab');
  expect((await focused(page))?.inMain, 'Tab after the skip link goes into the screen').toBe(true);
  await expectVisibleFocus(page);

  // every item of the navigation (all of them, in order), reached back from the screen with
  // Shift+Tab, then Enter: its heading, the item current, focus on main. Overview last: the console
  // opens on it, and the current screen's item moves nothing
  await expect(nav.getByRole('link')).toHaveText(SCREENS.map(([label]) => label));
  for (const [label, heading] of [...SCREENS.slice(1), SCREENS[0]]) {
    const link = nav.getByRole('link', { name: label, exact: true });
    await tabTo(page, link, 'Shift+Tab');
    await page.keyboard.press('Enter');
    await expect(h1).toHaveText(heading);
    await expect(link).toHaveAttribute('aria-current', 'page');
    await expect(main).toBeFocused();
    // and the screen's first control, if it has one (an empty list may not), is one Tab away, visibly
    await expect(main.locator('.loading')).toHaveCount(0);
    const controls = await main.evaluate(
      (element) =>
        element.querySelectorAll(
          'a[href], button:not(:disabled), input:not(:disabled), select:not(:disabled), textarea, summary',
        ).length,
    );
    await page.keyboard.press('Tab');
    expect((await focused(page))?.inMain, `Tab on ${label} goes into the screen`).toBe(controls > 0);
    await expectVisibleFocus(page);
  }

  // Webhooks: j to the test's webhook, ? and Escape give focus back to its link, Enter opens it
  await tabTo(page, nav.getByRole('link', { name: 'Webhooks', exact: true }), 'Shift+Tab');
  await page.keyboard.press('Enter');
  await expect(h1).toHaveText('Webhooks');
  const row = page.getByRole('link', { name: `Webhook ${webhookId}`, exact: true });
  await jTo(page, row);
  await expectVisibleFocus(page);
  await page.keyboard.press('?');
  const help = page.getByTestId('shortcuts-dialog');
  await expect(help).toBeVisible();
  await expectFocused(help.getByRole('button', { name: 'Close' }));
  await page.keyboard.press('Escape');
  await expect(help).toBeHidden();
  await expectFocused(row);
  // and closed with its button (Space), the same
  await page.keyboard.press('?');
  await expect(help.getByRole('button', { name: 'Close' })).toBeFocused();
  await page.keyboard.press('Space');
  await expect(help).toBeHidden();
  await expectFocused(row);

  await page.keyboard.press('Enter');
  await expect(h1).toContainText(`Webhook ${webhookId}`);
  await expect(main).toBeFocused();
  // back to the list through the navigation (its item is the current one)
  await tabTo(page, nav.getByRole('link', { name: 'Webhooks', exact: true }), 'Shift+Tab');
  await page.keyboard.press('Enter');
  await expect(h1).toHaveText('Webhooks');
  await jTo(page, row);
  await page.keyboard.press('Enter');
  await expect(h1).toContainText(`Webhook ${webhookId}`);

  // its registration, linked from the webhook, and Pause's confirmation: Escape, then Cancel by
  // Enter, each time focus back on Pause
  await tabTo(page, main.getByRole('link', { name: `Registration ${registrationId}`, exact: true }));
  await page.keyboard.press('Enter');
  await expect(h1).toContainText(`Registration ${registrationId}`);
  const pause = main.getByRole('button', { name: 'Pause', exact: true });
  await tabTo(page, pause);
  await page.keyboard.press('Enter');
  const dialog = page.getByRole('dialog');
  await expect(dialog).toBeVisible();
  await expectFocused(dialog.getByRole('button', { name: 'Cancel' }));
  await page.keyboard.press('Escape');
  await expect(dialog).toBeHidden();
  await expectFocused(pause);
  await page.keyboard.press('Enter');
  await expectFocused(dialog.getByRole('button', { name: 'Cancel' }));
  // the dialog keeps focus in it: Tab goes to its action and back, never to the page behind
  await page.keyboard.press('Tab');
  await expect(dialog.getByRole('button', { name: /^Pause/ })).toBeFocused();
  await expectVisibleFocus(page);
  await page.keyboard.press('Shift+Tab');
  await page.keyboard.press('Enter');
  await expect(dialog).toBeHidden();
  await expectFocused(pause);
  await expect(h1.getByTestId('registration-status')).toHaveText('Active');
});

test('the customer portal, opened from the console by keyboard, used by keyboard alone', async ({
  page,
  api,
  target,
}) => {
  const { registrationId, webhookId } = await oneWebhook(api, target);
  await signInByKeyboard(page);
  const nav = page.getByRole('navigation', { name: 'Main' });
  const h1 = page.getByRole('heading', { level: 1 });

  await tabTo(page, nav.getByRole('link', { name: 'Registrations', exact: true }));
  await page.keyboard.press('Enter');
  await expect(h1).toHaveText('Registrations');
  await jTo(page, page.getByRole('link', { name: `Registration ${registrationId}`, exact: true }));
  await page.keyboard.press('Enter');
  await expect(h1).toContainText(`Registration ${registrationId}`);

  await tabTo(page, page.getByRole('button', { name: 'Open customer portal' }));
  const opened = page.waitForEvent('popup');
  await page.keyboard.press('Enter');
  const portal = await opened;
  await expect(portal.getByTestId('portal')).toBeVisible();
  await expect(portal.getByRole('heading', { level: 1 })).toBeVisible();

  // the endpoint, its delivery, and back each time: focus follows, never lost on the page's body
  const endpoint = portal.getByRole('button', { name: target.url, exact: true });
  await tabTo(portal, endpoint);
  await portal.keyboard.press('Enter');
  const registration = portal.getByTestId('portal-registration');
  await expect(registration).toBeVisible();
  expect((await focused(portal))?.what ?? 'nothing', 'focus moves into the endpoint').toMatch(/^h2 /);

  const delivery = registration.getByRole('button', { name: String(webhookId), exact: true });
  await tabTo(portal, delivery);
  await portal.keyboard.press('Enter');
  const detail = portal.getByTestId('portal-webhook');
  await expect(detail).toBeVisible();
  expect((await focused(portal))?.what ?? 'nothing', 'focus moves into the delivery').toMatch(/^h2 /);
  await tabTo(portal, detail.getByRole('button', { name: '← Back' }), 'Shift+Tab');
  await portal.keyboard.press('Enter');
  await expectFocused(delivery);

  await tabTo(portal, registration.getByRole('button', { name: '← All endpoints' }), 'Shift+Tab');
  await portal.keyboard.press('Enter');
  await expectFocused(endpoint);

  // the tabs: Event catalog and back, by Enter
  await tabTo(portal, portal.getByRole('button', { name: 'Event catalog' }), 'Shift+Tab');
  await portal.keyboard.press('Enter');
  await expect(portal.getByRole('button', { name: 'Event catalog' })).toBeFocused();
  await tabTo(portal, portal.getByRole('button', { name: 'Endpoints' }), 'Shift+Tab');
  await portal.keyboard.press('Enter');
  await expect(endpoint).toBeVisible();
  await portal.close();
});
