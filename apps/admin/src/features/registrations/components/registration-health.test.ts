import type { WebhookRegistrationHealth } from '@platform/shared';
import { createElement } from 'react';
import { renderToStaticMarkup } from 'react-dom/server';
import { describe, expect, it } from 'vitest';
import { HealthBadge } from './registration-health-badge';
import { HealthFigures } from './registration-health-panel';
import { StatusBanner } from './registration-status-actions';

/** The text a screen reader or a test would read, tags dropped. */
const text = (html: string) => html.replace(/<[^>]+>/g, '').replace(/\s+/g, ' ');

const health: WebhookRegistrationHealth = {
  registrationId: 7,
  status: 'active',
  disabledReason: null,
  statusChanged: null,
  endpoint: { id: 3, url: 'https://hooks.example.com/a', origin: 'https://hooks.example.com' },
  target: 'https://hooks.example.com',
  breaker: { state: 'open', openUntil: '2026-11-26T10:01:00Z', consecutiveFailures: 5 },
  lastHour: {
    attempts: 20,
    requests: 8,
    skipped: 12,
    successes: 2,
    successRate: 0.25,
    p50Ms: 120,
    p95Ms: 2000,
  },
  lastDay: {
    attempts: 400,
    requests: 400,
    skipped: 0,
    successes: 394,
    successRate: 0.985,
    p50Ms: 80,
    p95Ms: 300,
  },
  dueCount: 12,
  oldestDueAt: '2026-11-26T09:00:00Z',
  inFlight: 1,
  lastSuccessAt: '2026-11-26T09:30:00Z',
  failingSince: '2026-11-26T09:31:00Z',
};

describe('registration health components', () => {
  it('banners a disabled registration with its reason and a Re-enable action', () => {
    const disabled = (reason: 'gone' | 'failing', mayReEnable = true) =>
      renderToStaticMarkup(
        createElement(StatusBanner, {
          registration: {
            id: 7,
            status: 'disabled',
            disabledReason: reason,
            statusChanged: '2026-11-26T10:00:00Z',
          },
          mayReEnable,
          onReEnable: () => {},
        }),
      );
    expect(disabled('gone')).toContain('data-testid="disabled-banner"');
    expect(text(disabled('gone'))).toContain('Disabled: The endpoint answered 410 Gone.');
    expect(text(disabled('failing'))).toContain('Disabled: Every attempt has failed for a long time.');
    expect(text(disabled('gone'))).toContain('Re-enable');
    expect(text(disabled('gone', false))).not.toContain('Re-enable');
  });

  it('notes a paused registration, and says nothing of an active one', () => {
    const banner = (status: 'paused' | 'active') =>
      renderToStaticMarkup(
        createElement(StatusBanner, {
          registration: { id: 7, status, disabledReason: null, statusChanged: null },
          mayReEnable: true,
          onReEnable: () => {},
        }),
      );
    expect(banner('paused')).toContain('data-testid="paused-banner"');
    expect(text(banner('paused'))).not.toContain('Re-enable');
    expect(banner('active')).toBe('');
  });

  it('badges the last hour and the failing run', () => {
    const html = renderToStaticMarkup(createElement(HealthBadge, { health }));
    expect(html).toContain('badge--tone-bad');
    expect(text(html)).toMatch(/^25\.0 %Failing since 2026-11-26 \d\d:31:00/);
  });

  it('shows the breaker, both windows, the queue and the chart', () => {
    const html = renderToStaticMarkup(createElement(HealthFigures, { health }));
    const read = text(html);
    expect(read).toContain('Open until');
    expect(read).toContain('5 consecutive failures · endpoint https://hooks.example.com/a');
    expect(read).toContain(
      '25.0 % · 2 of 8 requests · 12 skipped (no request sent) · p50 120 ms · p95 2.0 s',
    );
    expect(read).toContain('98.5 % · 394 of 400 requests · p50');
    expect(read).toMatch(/Awaiting delivery12/);
    expect(read).toMatch(/In flight1/);
    expect(html).toContain('data-testid="health-chart"');
  });
});
