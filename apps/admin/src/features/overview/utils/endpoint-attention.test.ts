import type { WebhookRegistrationRead } from '@platform/shared';
import { describe, expect, it } from 'vitest';
import { breakerProbes, endpointAttention, originOf } from './endpoint-attention';

const registration = (
  id: number,
  targetUrl: string,
  status: WebhookRegistrationRead['status'] = 'active',
): Pick<WebhookRegistrationRead, 'id' | 'targetUrl' | 'status' | 'disabledReason' | 'statusChanged'> => ({
  id,
  targetUrl,
  status,
  disabledReason: status === 'disabled' ? 'gone' : null,
  statusChanged: status === 'active' ? null : '2026-11-26T10:00:00Z',
});

const breaker = (state: 'closed' | 'open' | 'half-open', target: string) => ({
  target,
  breaker: { state, openUntil: state === 'open' ? '2026-11-26T10:01:00Z' : null, consecutiveFailures: 5 },
});

describe('endpoint attention', () => {
  it('counts targets by origin, as the breaker does', () => {
    expect(originOf('https://hooks.example.com:443/a?b=1')).toBe('https://hooks.example.com');
    expect(originOf('http://127.0.0.1:8080/x')).toBe('http://127.0.0.1:8080');
    expect(originOf('not a url')).toBe('not a url');
  });

  it('reads one breaker per target with an active registration', () => {
    const registrations = [
      registration(5, 'https://a.example/one'),
      registration(4, 'https://a.example/two'),
      registration(3, 'https://b.example/'),
      registration(2, 'https://c.example/', 'paused'),
      registration(1, 'https://d.example/', 'disabled'),
    ];
    expect(breakerProbes(registrations)).toEqual([5, 3]);
  });

  it('lists open and half-open circuits with their active registrations, and paused and disabled ones', () => {
    const registrations = [
      registration(5, 'https://a.example/one'),
      registration(4, 'https://a.example/two'),
      registration(3, 'https://b.example/'),
      registration(2, 'https://a.example/three', 'paused'),
      registration(1, 'https://d.example/', 'disabled'),
      registration(6, 'https://e.example/'),
      registration(7, 'https://f.example/'),
    ];
    const health = new Map([
      [5, breaker('open', 'https://a.example')],
      [3, breaker('closed', 'https://b.example')],
      [6, breaker('half-open', 'https://e.example')],
    ]);
    const attention = endpointAttention(registrations, health);
    expect(
      attention.openCircuits.map((c) => [c.target, c.breaker.state, c.registrations.map((r) => r.id)]),
    ).toEqual([
      ['https://a.example', 'open', [5, 4]],
      ['https://e.example', 'half-open', [6]],
    ]);
    expect(attention.paused.map((r) => r.id)).toEqual([2]);
    expect(attention.disabled.map((r) => r.id)).toEqual([1]);
    // f.example's breaker is not read yet
    expect(attention.unknownTargets).toBe(1);
  });
});
