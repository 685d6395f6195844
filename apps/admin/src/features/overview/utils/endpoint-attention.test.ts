import type { WebhookRegistrationRead } from '@platform/shared';
import { describe, expect, it } from 'vitest';
import { breakerProbes, endpointAttention, endpointOf } from './endpoint-attention';

const registration = (
  id: number,
  targetUrl: string,
  status: WebhookRegistrationRead['status'] = 'active',
  partyId = 1,
): Pick<
  WebhookRegistrationRead,
  'id' | 'partyId' | 'targetUrl' | 'status' | 'disabledReason' | 'statusChanged'
> => ({
  id,
  partyId,
  targetUrl,
  status,
  disabledReason: status === 'disabled' ? 'gone' : null,
  statusChanged: status === 'active' ? null : '2026-11-26T10:00:00Z',
});

const breaker = (state: 'closed' | 'open' | 'half-open', url: string) => ({
  endpoint: { id: 1, url, origin: new URL(url).origin },
  breaker: { state, openUntil: state === 'open' ? '2026-11-26T10:01:00Z' : null, consecutiveFailures: 5 },
});

describe('endpoint attention', () => {
  it('names endpoints by their normalised URL, as the breaker does', () => {
    expect(endpointOf('HTTPS://user:pw@Hooks.example.com:443/a?b=1#top')).toBe(
      'https://hooks.example.com/a?b=1',
    );
    expect(endpointOf('http://127.0.0.1:8080')).toBe('http://127.0.0.1:8080/');
    expect(endpointOf('not a url')).toBe('not a url');
  });

  it('reads one breaker per endpoint (party and URL) with an active registration', () => {
    const registrations = [
      registration(6, 'https://a.example/one'),
      registration(5, 'HTTPS://A.example/one'),
      registration(4, 'https://a.example/two'),
      registration(3, 'https://a.example/one', 'active', 2),
      registration(2, 'https://c.example/', 'paused'),
      registration(1, 'https://d.example/', 'disabled'),
    ];
    expect(breakerProbes(registrations)).toEqual([6, 4, 3]);
  });

  it('lists open and half-open circuits with their active registrations, and paused and disabled ones', () => {
    const registrations = [
      registration(5, 'https://a.example/one'),
      registration(4, 'https://a.example/one'),
      registration(3, 'https://a.example/two'),
      registration(2, 'https://a.example/one', 'paused'),
      registration(1, 'https://d.example/', 'disabled'),
      registration(6, 'https://e.example/'),
      registration(7, 'https://f.example/'),
    ];
    const health = new Map([
      [5, breaker('open', 'https://a.example/one')],
      [3, breaker('closed', 'https://a.example/two')],
      [6, breaker('half-open', 'https://e.example/')],
    ]);
    const attention = endpointAttention(registrations, health);
    expect(
      attention.openCircuits.map((c) => [c.endpoint, c.breaker.state, c.registrations.map((r) => r.id)]),
    ).toEqual([
      ['https://a.example/one', 'open', [5, 4]],
      ['https://e.example/', 'half-open', [6]],
    ]);
    expect(attention.paused.map((r) => r.id)).toEqual([2]);
    expect(attention.disabled.map((r) => r.id)).toEqual([1]);
    // f.example's breaker is not read yet
    expect(attention.unknownEndpoints).toBe(1);
  });
});
