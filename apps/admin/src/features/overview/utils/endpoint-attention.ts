import type { WebhookRegistrationHealth, WebhookRegistrationRead } from '@platform/shared';

type Registration = Pick<
  WebhookRegistrationRead,
  'id' | 'partyId' | 'targetUrl' | 'status' | 'disabledReason' | 'statusChanged'
>;

/** An endpoint whose circuit breaker is not closed, and the active registrations delivering to it. */
export interface OpenCircuit {
  /** The endpoint's normalised URL, as the API's health read names it. */
  endpoint: string;
  breaker: WebhookRegistrationHealth['breaker'];
  registrations: Registration[];
}

export interface EndpointAttention {
  openCircuits: OpenCircuit[];
  paused: Registration[];
  disabled: Registration[];
  /** Endpoints whose breaker could not be read (yet): the open circuits may be incomplete. */
  unknownEndpoints: number;
}

/**
 * The endpoint a URL names, as the dispatcher's breaker and limits count it (one party's
 * normalised URL, docs/decisions.md › Delivery isolation): lower-case scheme and host, no default
 * port, no credentials or fragment.
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
 * the breaker belongs to the endpoint and every registration of it answers the same breaker.
 * Paused and disabled registrations need no read: their status is in the list.
 */
export function breakerProbes(registrations: readonly Registration[]): number[] {
  return [...activeByEndpoint(registrations).values()].map((group) => group[0]!.id);
}

/** What needs an operator: open (or half-open) circuits by endpoint, paused and disabled registrations. */
export function endpointAttention(
  registrations: readonly Registration[],
  healthByRegistrationId: ReadonlyMap<number, Pick<WebhookRegistrationHealth, 'endpoint' | 'breaker'>>,
): EndpointAttention {
  const openCircuits: OpenCircuit[] = [];
  let unknownEndpoints = 0;
  for (const group of activeByEndpoint(registrations).values()) {
    const health = healthByRegistrationId.get(group[0]!.id);
    if (!health) unknownEndpoints += 1;
    else if (health.breaker.state !== 'closed') {
      openCircuits.push({ endpoint: health.endpoint.url, breaker: health.breaker, registrations: group });
    }
  }
  return {
    openCircuits,
    paused: registrations.filter((r) => r.status === 'paused'),
    disabled: registrations.filter((r) => r.status === 'disabled'),
    unknownEndpoints,
  };
}
