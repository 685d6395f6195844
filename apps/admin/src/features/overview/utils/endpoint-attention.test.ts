import type { WebhookRegistrationRead } from '@platform/shared';
import { describe, expect, it } from 'vitest';
import { breakerProbes, endpointAttention, endpointOf, type EndpointHealth } from './endpoint-attention';

const registration = (
  id: number,
  targetUrl: string,
  status: WebhookRegistrationRead['status'] = 'active',
  partyId = 1,
): Pick<
  WebhookRegistrationRead,
  'id' | 'partyId' | 'partyName' | 'targetUrl' | 'status' | 'disabledReason' | 'statusChanged'
> => ({
  id,
  partyId,
  partyName: `Party ${partyId}`,
  targetUrl,
  status,
  disabledReason: status === 'disabled' ? 'gone' : null,
  statusChanged: status === 'active' ? null : '2026-11-26T10:00:00Z',
});

const NOW = Date.parse('2026-11-26T10:00:00Z');

/** A health answer of endpoint `id`: its breaker, its hold, the registrations it names besides the probe. */
const health = (
  id: number,
  url: string,
  state: 'closed' | 'open' | 'half-open',
  options: {
    partyId?: number;
    holdUntil?: string | null;
    sharedWith?: EndpointHealth['endpoint']['sharedWith'];
    sharedWithCount?: number;
  } = {},
): EndpointHealth => ({
  endpoint: {
    id,
    url,
    origin: new URL(url).origin,
    partyId: options.partyId ?? 1,
    lastSuccessAt: null,
    lastFailureAt: null,
    sharedWith: options.sharedWith ?? [],
    sharedWithCount: options.sharedWithCount ?? options.sharedWith?.length ?? 0,
  },
  breaker: { state, openUntil: state === 'open' ? '2026-11-26T10:01:00Z' : null, consecutiveFailures: 5 },
  holdUntil: options.holdUntil ?? null,
});

describe('endpoint attention', () => {
  it('names endpoints by their normalised URL, as the breaker does', () => {
    expect(endpointOf('HTTPS://user:pw@Hooks.example.com:443/a?b=1#top')).toBe(
      'https://hooks.example.com/a?b=1',
    );
    expect(endpointOf('http://127.0.0.1:8080')).toBe('http://127.0.0.1:8080/');
    expect(endpointOf('not a url')).toBe('not a url');
  });

  it('reads one health per endpoint (party and URL) with an active registration', () => {
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

  it('lists endpoints, not hosts: two parties on one URL are two endpoints, one failing and one not', () => {
    const registrations = [
      registration(1, 'https://hooks.example/in', 'active', 1),
      registration(2, 'https://hooks.example/in', 'active', 2),
      registration(3, 'https://hooks.example/other', 'active', 1),
    ];
    const attention = endpointAttention(
      registrations,
      new Map([
        [1, health(10, 'https://hooks.example/in', 'open', { partyId: 1 })],
        [2, health(20, 'https://hooks.example/in', 'closed', { partyId: 2 })],
        [3, health(30, 'https://hooks.example/other', 'closed', { partyId: 1 })],
      ]),
      NOW,
    );
    expect(attention.endpoints).toEqual([
      {
        endpointId: 10,
        partyId: 1,
        partyName: 'Party 1',
        url: 'https://hooks.example/in',
        breaker: { state: 'open', openUntil: '2026-11-26T10:01:00Z', consecutiveFailures: 5 },
        holdUntil: null,
        registrations: [{ id: 1, status: 'active' }],
        moreRegistrations: 0,
      },
    ]);
  });

  it('lists open, half-open and held endpoints with all their registrations, and paused and disabled ones', () => {
    const registrations = [
      registration(5, 'https://a.example/one'),
      registration(4, 'https://a.example/one'),
      registration(3, 'https://a.example/two'),
      registration(2, 'https://a.example/one', 'paused'),
      registration(1, 'https://d.example/', 'disabled'),
      registration(6, 'https://e.example/'),
      registration(7, 'https://f.example/'),
      registration(8, 'https://g.example/'),
      registration(9, 'https://h.example/'),
    ];
    const healthById = new Map([
      // the health read names the endpoint's other registrations, the 100 newest or not
      [
        5,
        health(1, 'https://a.example/one', 'open', {
          sharedWith: [
            { id: 2, status: 'paused' },
            { id: 4, status: 'active' },
            { id: 40, status: 'disabled' },
          ],
          sharedWithCount: 5,
        }),
      ],
      [3, health(2, 'https://a.example/two', 'closed')],
      [6, health(3, 'https://e.example/', 'half-open')],
      // held by its receiver, breaker closed; and a hold that has ended
      [8, health(4, 'https://g.example/', 'closed', { holdUntil: '2026-11-26T10:00:05Z' })],
      [9, health(5, 'https://h.example/', 'closed', { holdUntil: '2026-11-26T09:59:59Z' })],
    ]);
    const attention = endpointAttention(registrations, healthById, NOW);
    expect(
      attention.endpoints.map((e) => [
        e.url,
        e.breaker.state,
        e.holdUntil,
        e.registrations.map((r) => `${r.id} ${r.status}`),
        e.moreRegistrations,
      ]),
    ).toEqual([
      ['https://a.example/one', 'open', null, ['2 paused', '4 active', '5 active', '40 disabled'], 2],
      ['https://e.example/', 'half-open', null, ['6 active'], 0],
      ['https://g.example/', 'closed', '2026-11-26T10:00:05Z', ['8 active'], 0],
    ]);
    expect(attention.paused.map((r) => r.id)).toEqual([2]);
    expect(attention.disabled.map((r) => r.id)).toEqual([1]);
    // f.example's health is not read yet
    expect(attention.unknownEndpoints).toBe(1);
  });

  it('merges what the browser splits but the API calls one endpoint', () => {
    // the browser keeps a trailing dot in the host; say the API's normalisation does not
    const registrations = [registration(1, 'https://a.example./x'), registration(2, 'https://a.example/x')];
    const healthById = new Map([
      [1, health(7, 'https://a.example/x', 'open', { sharedWith: [{ id: 2, status: 'active' }] })],
      [2, health(7, 'https://a.example/x', 'open', { sharedWith: [{ id: 1, status: 'active' }] })],
    ]);
    const { endpoints } = endpointAttention(registrations, healthById, NOW);
    expect(endpoints.map((e) => [e.endpointId, e.registrations.map((r) => r.id)])).toEqual([[7, [1, 2]]]);
  });
});
