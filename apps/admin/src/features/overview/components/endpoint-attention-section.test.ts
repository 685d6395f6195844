import { createElement } from 'react';
import { renderToStaticMarkup } from 'react-dom/server';
import { describe, expect, it } from 'vitest';
import { AttentionLists } from './endpoint-attention-section';

const text = (html: string) => html.replace(/<[^>]+>/g, '').replace(/\s+/g, ' ');

describe('endpoint attention lists', () => {
  it('shows open circuits with their registrations, paused and disabled registrations with why', () => {
    const html = renderToStaticMarkup(
      createElement(AttentionLists, {
        attention: {
          openCircuits: [
            {
              endpoint: 'https://a.example/hook',
              breaker: { state: 'open', openUntil: '2026-11-26T10:01:00Z', consecutiveFailures: 5 },
              registrations: [
                {
                  id: 5,
                  partyId: 9,
                  targetUrl: 'https://a.example/hook',
                  status: 'active',
                  disabledReason: null,
                  statusChanged: null,
                },
                {
                  id: 4,
                  partyId: 9,
                  targetUrl: 'HTTPS://A.example:443/hook',
                  status: 'active',
                  disabledReason: null,
                  statusChanged: null,
                },
              ],
            },
          ],
          paused: [],
          disabled: [
            {
              id: 1,
              partyId: 9,
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
    expect(read).toContain('Open circuits (1)');
    expect(read).toMatch(
      /https:\/\/a\.example\/hook Open 5 consecutive failures · trial .*Registration 5, Registration 4/,
    );
    expect(read).toContain('Paused (0)No registration is paused.');
    expect(read).toContain('Disabled (1)');
    expect(read).toContain('The endpoint answered 410 Gone');
    expect(html).toContain('href="/registrations/1"');
  });
});
