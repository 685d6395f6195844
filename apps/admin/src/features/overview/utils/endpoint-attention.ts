import type {
  WebhookRegistrationHealth,
  WebhookRegistrationRead,
  WebhookRegistrationStatus,
} from '@platform/shared';
import { isHeld } from '../../../lib/registration-health';

type Registration = Pick<
  WebhookRegistrationRead,
  'id' | 'partyId' | 'partyName' | 'targetUrl' | 'status' | 'disabledReason' | 'statusChanged'
>;

/** What the overview reads of one endpoint's health answer. */
export type EndpointHealth = Pick<WebhookRegistrationHealth, 'endpoint' | 'breaker' | 'holdUntil'>;

/**
 * An endpoint (one party's normalised URL, the unit of isolation) that needs an operator: its
 * breaker is not closed, or its receiver holds its deliveries (`Retry-After`).
 */
export interface EndpointNeedingAttention {
  endpointId: number;
  partyId: number;
  partyName: string;
  /** The normalised URL, as the API's health read names it. */
  url: string;
  breaker: WebhookRegistrationHealth['breaker'];
  /** Until when the receiver holds its deliveries; null when it does not (any more). */
  holdUntil: string | null;
  /** Every live registration delivering to it, by id: those listed and those the health read names. */
  registrations: { id: number; status: WebhookRegistrationStatus }[];
  /** Registrations on it that the health read counted but did not name. */
  moreRegistrations: number;
}

export interface EndpointAttention {
  endpoints: EndpointNeedingAttention[];
  paused: Registration[];
  disabled: Registration[];
  /** Endpoints whose health could not be read (yet): the list may be incomplete. */
  unknownEndpoints: number;
}

/**
 * The endpoint a URL names, as near as the browser can say it (the API's `webhook_endpoint_url`
 * is the truth, and the health answer's endpoint id merges what this splits): lower-case scheme
 * and host, no default port, no credentials or fragment.
 */
export function endpointOf(targetUrl: string): string {
  try {
    const url = new URL(targetUrl);
    url.username = '';
    url.password = '';
    url.hash = '';
    return url.href;
  } catch {
    return targetUrl;
  }
}

function activeByEndpoint(registrations: readonly Registration[]): Map<string, Registration[]> {
  const byEndpoint = new Map<string, Registration[]>();
  for (const registration of registrations) {
    if (registration.status !== 'active') continue;
    const key = `${registration.partyId} ${endpointOf(registration.targetUrl)}`;
    byEndpoint.set(key, [...(byEndpoint.get(key) ?? []), registration]);
  }
  return byEndpoint;
}

/**
 * The registrations whose health the overview reads: one active registration per endpoint, since
 * the breaker and the hold belong to the endpoint and every registration of it answers the same.
 * Paused and disabled registrations need no read: their status is in the list.
 */
export function breakerProbes(registrations: readonly Registration[]): number[] {
  return [...activeByEndpoint(registrations).values()].map((group) => group[0]!.id);
}

/** Open first, then half-open, then held with a closed breaker; then by party and URL. */
const URGENCY = { open: 0, 'half-open': 1, closed: 2 } as const;

/**
 * What needs an operator: endpoints whose breaker is not closed or whose receiver holds them (at
 * `now`), each with its party and its registrations; paused and disabled registrations.
 */
export function endpointAttention(
  registrations: readonly Registration[],
  healthByRegistrationId: ReadonlyMap<number, EndpointHealth>,
  now: number,
): EndpointAttention {
  const byId = new Map<number, EndpointNeedingAttention>();
  let unknownEndpoints = 0;
  for (const group of activeByEndpoint(registrations).values()) {
    const probe = group[0]!;
    const health = healthByRegistrationId.get(probe.id);
    if (!health) {
      unknownEndpoints += 1;
      continue;
    }
    const held = isHeld(health.holdUntil, now);
    if (health.breaker.state === 'closed' && !held) continue;
    const { endpoint } = health;
    const entry = byId.get(endpoint.id) ?? {
      endpointId: endpoint.id,
      partyId: endpoint.partyId,
      partyName: probe.partyName,
      url: endpoint.url,
      breaker: health.breaker,
      holdUntil: held ? health.holdUntil : null,
      registrations: [],
      moreRegistrations: endpoint.sharedWithCount - endpoint.sharedWith.length,
    };
    const known = new Map(entry.registrations.map((r) => [r.id, r]));
    for (const r of [...group, ...endpoint.sharedWith]) known.set(r.id, { id: r.id, status: r.status });
    entry.registrations = [...known.values()].sort((a, b) => a.id - b.id);
    byId.set(endpoint.id, entry);
  }
  const endpoints = [...byId.values()].sort(
    (a, b) =>
      URGENCY[a.breaker.state] - URGENCY[b.breaker.state] ||
      a.partyName.localeCompare(b.partyName) ||
      a.url.localeCompare(b.url),
  );
  return {
    endpoints,
    paused: registrations.filter((r) => r.status === 'paused'),
    disabled: registrations.filter((r) => r.status === 'disabled'),
    unknownEndpoints,
  };
}
