import type { WebhookRegistrationHealth, WebhookRegistrationRead } from '@platform/shared';

type Registration = Pick<
  WebhookRegistrationRead,
  'id' | 'targetUrl' | 'status' | 'disabledReason' | 'statusChanged'
>;

/** A target whose circuit breaker is not closed, and the active registrations delivering to it. */
export interface OpenCircuit {
  target: string;
  breaker: WebhookRegistrationHealth['breaker'];
  registrations: Registration[];
}

export interface EndpointAttention {
  openCircuits: OpenCircuit[];
  paused: Registration[];
  disabled: Registration[];
  /** Targets whose breaker could not be read (yet): the open circuits may be incomplete. */
  unknownTargets: number;
}

/** A target is an origin (scheme, host, port), as the dispatcher's breaker and limits count it. */
export function originOf(targetUrl: string): string {
  try {
    return new URL(targetUrl).origin;
  } catch {
    return targetUrl;
  }
}

function activeByOrigin(registrations: readonly Registration[]): Map<string, Registration[]> {
  const byOrigin = new Map<string, Registration[]>();
  for (const registration of registrations) {
    if (registration.status !== 'active') continue;
    const origin = originOf(registration.targetUrl);
    byOrigin.set(origin, [...(byOrigin.get(origin) ?? []), registration]);
  }
  return byOrigin;
}

/**
 * The registrations whose health the overview reads: one active registration per target, since
 * the breaker belongs to the target and every registration of it answers the same breaker.
 * Paused and disabled registrations need no read: their status is in the list.
 */
export function breakerProbes(registrations: readonly Registration[]): number[] {
  return [...activeByOrigin(registrations).values()].map((group) => group[0]!.id);
}

/** What needs an operator: open (or half-open) circuits by target, paused and disabled registrations. */
export function endpointAttention(
  registrations: readonly Registration[],
  healthByRegistrationId: ReadonlyMap<number, Pick<WebhookRegistrationHealth, 'target' | 'breaker'>>,
): EndpointAttention {
  const openCircuits: OpenCircuit[] = [];
  let unknownTargets = 0;
  for (const group of activeByOrigin(registrations).values()) {
    const health = healthByRegistrationId.get(group[0]!.id);
    if (!health) unknownTargets += 1;
    else if (health.breaker.state !== 'closed') {
      openCircuits.push({ target: health.target, breaker: health.breaker, registrations: group });
    }
  }
  return {
    openCircuits,
    paused: registrations.filter((r) => r.status === 'paused'),
    disabled: registrations.filter((r) => r.status === 'disabled'),
    unknownTargets,
  };
}
