/** An endpoint's circuit breaker (docs/dispatcher.md › The circuit breaker). */
export const BREAKER_STATES = ['closed', 'open', 'half-open'] as const;
export type BreakerState = (typeof BREAKER_STATES)[number];

/**
 * The breaker's state machine as data, beside the webhook's (`WEBHOOK_TRANSITIONS`): every change
 * of an endpoint's `breaker_state` the system may make, and who makes it. `from: null` is the state
 * an endpoint is written in. The SQL makes exactly these changes, which a test proves by recording
 * every change a trigger sees (`packages/db/src/queue/transitions.test.ts`).
 *
 * - `registration`: a registration names a URL its party has no endpoint of yet; the endpoint
 *   starts closed.
 * - `delivery`: recorded results (`webhooks_complete`). A run of target failures opens a closed
 *   breaker; an answer closes it, also an open one (a request sent before it opened came back);
 *   the trial's answer closes a half-open one, its target failure opens it again.
 * - `claim`: an open breaker's cool-down is over and a claim takes its one trial.
 * - `operator`: an operator says the endpoint is fixed (resume, retry, recover, test event): an
 *   open breaker half-opens at once (`webhook_target_half_open`).
 */
export const BREAKER_TRANSITIONS = [
  { from: null, to: 'closed', by: 'registration' },
  { from: 'closed', to: 'open', by: 'delivery' },
  { from: 'open', to: 'closed', by: 'delivery' },
  { from: 'half-open', to: 'closed', by: 'delivery' },
  { from: 'half-open', to: 'open', by: 'delivery' },
  { from: 'open', to: 'half-open', by: 'claim' },
  { from: 'open', to: 'half-open', by: 'operator' },
] as const satisfies readonly { from: BreakerState | null; to: BreakerState; by: string }[];

export type BreakerTransition = (typeof BREAKER_TRANSITIONS)[number];
/** Who changes a breaker's state. */
export type BreakerTransitionCause = BreakerTransition['by'];
