import type { WebhookOperationRead } from '@platform/shared';
import { createElement } from 'react';
import { renderToStaticMarkup } from 'react-dom/server';
import { describe, expect, it } from 'vitest';
import { anOperation } from '../../../../tests/support/operations';
import { RotatedSecretPanel } from './rotate-secret';
import { TestEventResult } from './test-event-form';
import { WINDOW_OPERATION_COPY } from './window-operation-dialog';

/** The text a screen reader or a test would read, tags dropped. */
const text = (html: string) => html.replace(/<[^>]+>/g, '').replace(/\s+/g, ' ');

/** A finished dry run of a recover of registration 3 that would change 2. */
const dryRun = (overrides: Partial<WebhookOperationRead>): WebhookOperationRead =>
  anOperation({
    id: 1,
    action: 'recover',
    state: 'done',
    dryRun: true,
    freshSchedule: true,
    registrationId: 3,
    filter: { since: '2026-11-26T10:00:00Z' },
    total: 2,
    done: 2,
    changed: 2,
    skipped: {},
    startedAt: '2026-11-26T10:00:00Z',
    finishedAt: '2026-11-26T10:00:01Z',
    requestedByAccountId: 2,
    ...overrides,
  });

describe('registration recovery tools', () => {
  it('says what a recover and a replay would do, and names the count on the confirm button', () => {
    const { recover, replay } = WINDOW_OPERATION_COPY;
    expect(recover.countText(dryRun({ changed: 2 }))).toBe('2 Failed webhooks would be delivered again.');
    expect(recover.countText(dryRun({ changed: 1 }))).toBe('1 Failed webhook would be delivered again.');
    expect(recover.countText(dryRun({ changed: 0 }))).toMatch(/nothing to recover/);
    expect(recover.confirmLabel(dryRun({ changed: 1200 }))).toBe('Recover 1,200 webhooks');
    const replayed = dryRun({ action: 'replay', total: 5, changed: 4 });
    expect(replay.countText(replayed)).toBe('5 changes in the window: 4 new webhooks would be written.');
    expect(replay.confirmLabel(replayed)).toBe('Write 4 webhooks');
    expect(replay.explanation).toMatch(/new webhooks are written for every change in the window/i);
  });

  it('shows a test event’s answer: accepted or failed, status, duration, error, the answer’s start', () => {
    const accepted = text(
      renderToStaticMarkup(
        createElement(TestEventResult, {
          result: { statusCode: 200, durationMs: 35, errorKind: null, responseExcerpt: '{"ok":true}' },
        }),
      ),
    );
    expect(accepted).toContain('The target accepted the test event (HTTP 200) in 35 ms.');
    expect(accepted).toContain('Error kindNone');
    expect(accepted).toContain('{&quot;ok&quot;:true}');
    const timedOut = text(
      renderToStaticMarkup(
        createElement(TestEventResult, {
          result: { statusCode: null, durationMs: 10_000, errorKind: 'timeout', responseExcerpt: null },
        }),
      ),
    );
    expect(timedOut).toContain('The test event failed in 10 s.');
    expect(timedOut).toContain('Status codeNo answer');
    expect(timedOut).toContain('Error kindtimeout');
    expect(timedOut).not.toContain('Start of the answer');
  });

  it('shows a rotated secret once with the end of its overlap, or that the old one no longer verifies', () => {
    const panel = (previousSecretExpiresAt: string | null) =>
      renderToStaticMarkup(
        createElement(RotatedSecretPanel, {
          registrationId: 3,
          result: { signingSecret: 'whsec_new', previousSecretExpiresAt },
          onDismiss: () => {},
        }),
      );
    const overlapping = panel('2026-11-27T10:00:00Z');
    expect(overlapping).toContain('data-testid="rotated-secret-panel"');
    expect(text(overlapping)).toContain('whsec_new');
    expect(text(overlapping)).toContain('It is shown only this once.');
    expect(overlapping).toContain('dateTime="2026-11-27T10:00:00Z"');
    expect(text(overlapping)).toContain('every delivery carries both signatures');
    expect(text(panel(null))).toContain('The previous secret no longer verifies');
  });
});
