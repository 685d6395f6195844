import type {
  BreakerState,
  WebhookDisabledReason,
  WebhookRegistrationHealth,
  WebhookRegistrationStatus,
} from '@platform/shared';
import { queryOptions, useQuery } from '@tanstack/react-query';
import { api } from './api';
import { queryRoots } from './query-keys';

/**
 * GET /api/webhook-registrations/{id}/health. Read by the registrations screens and the overview,
 * so it lives here; its key is under the registrations root, so pausing, resuming or deleting a
 * registration refreshes it wherever it shows.
 */
export function getRegistrationHealth(id: number, signal?: AbortSignal) {
  return api.request<WebhookRegistrationHealth>(`/api/webhook-registrations/${id}/health`, { signal });
}

export function getRegistrationHealthQueryOptions(id: number, refetchInterval: number) {
  return queryOptions({
    queryKey: [...queryRoots.registrations, 'health', id],
    queryFn: ({ signal }) => getRegistrationHealth(id, signal),
    // react-query pauses the interval while the tab is hidden
    refetchInterval,
    staleTime: refetchInterval / 2,
  });
}

/** Status names, with what each means for deliveries (tooltips, the detail page). */
export const REGISTRATION_STATUS_COPY: Readonly<
  Record<WebhookRegistrationStatus, { name: string; description: string }>
> = {
  active: { name: 'Active', description: 'Its webhooks are delivered.' },
  paused: {
    name: 'Paused',
    description: 'Paused by an operator: its webhooks are written but none is sent until it is resumed.',
  },
  disabled: {
    name: 'Disabled',
    description:
      'Disabled by the dispatcher: its webhooks are written and kept but none is sent until it is re-enabled.',
  },
};

/** Why the dispatcher disabled a registration, as the disabled banner says it. */
export const DISABLED_REASON_TEXT: Readonly<Record<WebhookDisabledReason, string>> = {
  gone: 'The endpoint answered 410 Gone',
  failing: 'Every attempt has failed for a long time',
};

/** Circuit breaker states, with what each means for the endpoint's deliveries. */
export const BREAKER_COPY: Readonly<Record<BreakerState, { name: string; description: string }>> = {
  closed: { name: 'Closed', description: 'Deliveries go out as usual.' },
  open: {
    name: 'Open',
    description:
      'The endpoint failed repeatedly: its due webhooks are recorded as circuit-open without a request until the cool-down ends. Other endpoints, on the same host too, are not affected.',
  },
  'half-open': {
    name: 'Half-open',
    description: 'One trial delivery decides: a success closes the breaker, a failure opens it again.',
  },
};

/** A registration's rate limit, as the console says it: "At most 10/s", or "No limit". */
export function rateLimitText(rateLimit: number | null): string {
  return rateLimit === null ? 'No limit' : `At most ${rateLimit.toLocaleString('en-GB')}/s`;
}

/** Whether the receiver still holds the endpoint (`holdUntil` ahead of `now`, epoch ms). */
export function isHeld(holdUntil: string | null, now: number): holdUntil is string {
  return holdUntil !== null && Date.parse(holdUntil) > now;
}

/** What a receiver's hold means, for the tooltip wherever one is shown. */
export const HOLD_DESCRIPTION =
  'The endpoint answered 429 or 503 with Retry-After: every delivery to it waits until then, and no attempt is spent.';

/** A registration's health, refreshed every `refetchInterval` ms while the tab is visible. */
export function useRegistrationHealth(id: number, refetchInterval: number) {
  return useQuery(getRegistrationHealthQueryOptions(id, refetchInterval));
}
