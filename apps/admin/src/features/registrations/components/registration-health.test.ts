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
  endpoint: {
    id: 3,
    url: 'https://hooks.example.com/a',
    origin: 'https://hooks.example.com',
    partyId: 9,
    lastSuccessAt: '2026-11-26T09:29:50Z',
    lastFailureAt: '2026-11-26T09:59:00Z',
    sharedWith: [],
    sharedWithCount: 0,
  },
  target: 'https://hooks.example.com',
  breaker: { state: 'open', openUntil: '2026-11-26T10:01:00Z', consecutiveFailures: 5 },
  holdUntil: null,
  rateLimit: null,
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
  dueCountCapped: false,
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
    expect(read).toContain('5 consecutive failures');
    expect(read).toContain(
      '25.0 % · 2 of 8 requests · 12 skipped (no request sent) · p50 120 ms · p95 2.0 s',
    );
    expect(read).toContain('98.5 % · 394 of 400 requests · p50');
    expect(read).toMatch(/Awaiting delivery12/);
    expect(read).toMatch(/In flight1/);
    expect(html).toContain('data-testid="health-chart"');
  });

  it('shows the endpoint: its URL, that no other registration shares it, no hold, no rate limit, its last success and failure', () => {
    const read = text(renderToStaticMarkup(createElement(HealthFigures, { health })));
    expect(read).toContain('Endpointhttps://hooks.example.com/aNo other registration delivers to it.');
    expect(read).toContain('Receiver holdNot held');
    expect(read).toContain('Rate limitNo limit');
    expect(read).toMatch(/Endpoint’s last success2026-11-26 \d\d:29:50/);
    expect(read).toMatch(/Endpoint’s last failure2026-11-26 \d\d:59:00/);
  });

  it('shows the receiver’s hold while it lasts, the rate limit, and the registrations sharing the endpoint', () => {
    const holdUntil = new Date(Date.now() + 5 * 60_000).toISOString();
    const html = renderToStaticMarkup(
      createElement(HealthFigures, {
        health: {
          ...health,
          breaker: { state: 'half-open', openUntil: null, consecutiveFailures: 5 },
          holdUntil,
          rateLimit: 10,
          endpoint: {
            ...health.endpoint,
            sharedWith: [
              { id: 8, status: 'active' },
              { id: 9, status: 'paused' },
            ],
            sharedWithCount: 4,
          },
        },
      }),
    );
    const read = text(html);
    expect(read).toContain('Circuit breakerHalf-open5 consecutive failures');
    expect(read).toMatch(/Receiver holdHeld by the receiver until \d{4}-\d\d-\d\d .*\(in \d+ min\)/);
    expect(read).toContain('Rate limitAt most 10/s');
    expect(read).toContain(
      'Shared with Registration 8, Registration 9 (Paused) and 2 more (same party and URL: one breaker, one hold)',
    );
    expect(html).toContain('href="/registrations/9"');
  });

  it('says "Not held" once the hold has passed', () => {
    const holdUntil = new Date(Date.now() - 1_000).toISOString();
    const read = text(
      renderToStaticMarkup(createElement(HealthFigures, { health: { ...health, holdUntil } })),
    );
    expect(read).toContain('Receiver holdNot held');
  });
});
