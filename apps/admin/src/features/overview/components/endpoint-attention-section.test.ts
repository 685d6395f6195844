import { createElement } from 'react';
import { renderToStaticMarkup } from 'react-dom/server';
import { describe, expect, it } from 'vitest';
import { AttentionLists } from './endpoint-attention-section';

const text = (html: string) => html.replace(/<[^>]+>/g, '').replace(/\s+/g, ' ');

describe('endpoint attention lists', () => {
  it('shows endpoints (party and URL) with breaker, hold and registrations; paused and disabled registrations with why', () => {
    const html = renderToStaticMarkup(
      createElement(AttentionLists, {
        attention: {
          endpoints: [
            {
              endpointId: 3,
              partyId: 9,
              partyName: 'Lindenhof GmbH',
              url: 'https://a.example/hook',
              breaker: { state: 'open', openUntil: '2026-11-26T10:01:00Z', consecutiveFailures: 5 },
              holdUntil: null,
              registrations: [
                { id: 4, status: 'active' },
                { id: 5, status: 'paused' },
              ],
              moreRegistrations: 2,
            },
            {
              endpointId: 8,
              partyId: 10,
              partyName: 'Bergblick AG',
              url: 'https://a.example/other',
              breaker: { state: 'closed', openUntil: null, consecutiveFailures: 0 },
              holdUntil: '2026-11-26T10:00:30Z',
              registrations: [{ id: 6, status: 'active' }],
              moreRegistrations: 0,
            },
          ],
          paused: [],
          disabled: [
            {
              id: 1,
              partyId: 9,
              partyName: 'Lindenhof GmbH',
              targetUrl: 'https://d.example/',
              status: 'disabled',
              disabledReason: 'gone',
              statusChanged: '2026-11-26T10:00:00Z',
            },
          ],
          unknownEndpoints: 0,
        },
      }),
    );
    const read = text(html);
    expect(read).toContain('Endpoints needing attention (2)');
    expect(read).not.toContain('Open circuits');
    expect(read).toMatch(
      /Lindenhof GmbH https:\/\/a\.example\/hook Open 5 consecutive failures · trial .*Registration 4, Registration 5 \(Paused\) and 2 more/,
    );
    // held by its receiver, breaker closed: the hold, no breaker badge
    expect(read).toMatch(
      /Bergblick AG https:\/\/a\.example\/other Held by the receiver until 2026-11-26 .*Registration 6/,
    );
    expect(read).not.toMatch(/other Closed/);
    expect(html.match(/data-testid="attention-endpoint"/g)).toHaveLength(2);
    expect(html).toContain('href="/registrations/5"');
    expect(read).toContain('Paused (0)No registration is paused.');
    expect(read).toContain('Disabled (1)');
    expect(read).toMatch(/Registration 1 Lindenhof GmbH https:\/\/d\.example\//);
    expect(read).toContain('The endpoint answered 410 Gone');
    expect(html).toContain('href="/registrations/1"');
  });
});
