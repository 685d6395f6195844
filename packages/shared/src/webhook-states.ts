import { WebhookState } from './enums';

const { Created, Retrying, Successful, Failed, Aborted, Pending, Resolved } = WebhookState;

/**
 * The webhook state machine (docs/webhooks.md#the-state-machine) as data: every change of a webhook's
 * state the system may make, and who makes it. `from: null` is the state a webhook is written in.
 * The queue's SQL (`packages/db/src/queue/`) makes exactly these changes, which a test proves by
 * recording every change a trigger sees; the API answers 409 and the console hides a button for
 * an operator action the table does not allow.
 * The breaker's states have a table of their own beside it (`BREAKER_TRANSITIONS`,
 * `breaker-states.ts`).
 *
 * - `enqueue`: a change fans out; a grouped webhook waits (Pending) behind an open one.
 * - `claim`: a webhook whose registration was deleted after it was written is aborted, not sent.
 * - `delivery`: the result of an attempt: 2xx, a failure with attempts left, the last failure
 *   (a Retrying webhook that fails again with attempts left stays Retrying: no change).
 * - `release`: the group's head ended, so its oldest Pending becomes the head (or is aborted when
 *   it is leased straight to a dispatcher and its registration was deleted meanwhile).
 * - `repair`: the sweep promotes the oldest Pending of a group nothing holds.
 * - `operator`: Abort and Resolve of any non-final webhook; Retry of a Failed one, which
 *   re-enters its group as Pending when it had released it (continue-after-fail) and others wait.
 * - `registration-delete`: deleting a registration aborts its undelivered webhooks.
 */
export const WEBHOOK_TRANSITIONS = [
  { from: null, to: Created, by: 'enqueue' },
  { from: null, to: Pending, by: 'enqueue' },
  { from: Created, to: Aborted, by: 'claim' },
  { from: Retrying, to: Aborted, by: 'claim' },
  { from: Created, to: Successful, by: 'delivery' },
  { from: Created, to: Retrying, by: 'delivery' },
  { from: Created, to: Failed, by: 'delivery' },
  { from: Retrying, to: Successful, by: 'delivery' },
  { from: Retrying, to: Failed, by: 'delivery' },
  { from: Pending, to: Created, by: 'release' },
  { from: Pending, to: Aborted, by: 'release' },
  { from: Pending, to: Created, by: 'repair' },
  { from: Created, to: Aborted, by: 'operator' },
  { from: Retrying, to: Aborted, by: 'operator' },
  { from: Failed, to: Aborted, by: 'operator' },
  { from: Pending, to: Aborted, by: 'operator' },
  { from: Created, to: Resolved, by: 'operator' },
  { from: Retrying, to: Resolved, by: 'operator' },
  { from: Failed, to: Resolved, by: 'operator' },
  { from: Pending, to: Resolved, by: 'operator' },
  { from: Failed, to: Retrying, by: 'operator' },
  { from: Failed, to: Pending, by: 'operator' },
  { from: Created, to: Aborted, by: 'registration-delete' },
  { from: Retrying, to: Aborted, by: 'registration-delete' },
  { from: Failed, to: Aborted, by: 'registration-delete' },
  { from: Pending, to: Aborted, by: 'registration-delete' },
] as const satisfies readonly {
  from: WebhookState | null;
  to: WebhookState;
  by: string;
}[];

export type WebhookTransition = (typeof WEBHOOK_TRANSITIONS)[number];
/** Who changes a webhook's state. */
export type WebhookTransitionCause = WebhookTransition['by'];
/** The states an attempt's result moves a webhook to: Successful, Retrying or Failed. */
export type DeliveryOutcomeState = Extract<WebhookTransition, { by: 'delivery' }>['to'];

/** Whether the state machine lets `by` move a webhook from `from` (null: a new one) to `to`. */
export function canTransition(
  from: WebhookState | null,
  to: WebhookState,
  by?: WebhookTransitionCause,
): boolean {
  return WEBHOOK_TRANSITIONS.some((t) => t.from === from && t.to === to && (by === undefined || t.by === by));
}

/** Final states: nothing ever changes them again (Successful, Aborted, Resolved). */
export const FINAL_WEBHOOK_STATES: readonly WebhookState[] = Object.values(WebhookState).filter(
  (state) => !WEBHOOK_TRANSITIONS.some((t) => t.from === state),
);

/** Webhook states that still await delivery or a decision: Created, Retrying, Failed, Pending. */
export const UNDELIVERED_WEBHOOK_STATES: readonly WebhookState[] = Object.values(WebhookState).filter(
  (state) => !FINAL_WEBHOOK_STATES.includes(state),
);

/** The states a claim takes (when due): a group's head, or an ungrouped webhook. */
export const CLAIMABLE_WEBHOOK_STATES: readonly WebhookState[] = [Created, Retrying];

/**
 * The states in which a webhook holds its group: `head`, the one being delivered (Created,
 * Retrying); `blocking`, a Failed one, unless its registration continues after a failure (then
 * it released the group when it failed). Only a webhook that holds its group releases it when it
 * ends; a Pending one just leaves the chain. Read by `holdsGroup` and by the operator actions'
 * SQL (`webhooks_operator_apply`).
 */
export const GROUP_HOLDING_STATES: {
  readonly head: readonly WebhookState[];
  readonly blocking: readonly WebhookState[];
} = { head: CLAIMABLE_WEBHOOK_STATES, blocking: [Failed] };

/** Whether a webhook in `state` holds its group (`GROUP_HOLDING_STATES`). */
export function holdsGroup(state: WebhookState, continueAfterFail: boolean): boolean {
  if (GROUP_HOLDING_STATES.head.includes(state)) return true;
  return !continueAfterFail && GROUP_HOLDING_STATES.blocking.includes(state);
}

/** What an operator may do to a webhook, and the states each action may lead to. */
export const WEBHOOK_OPERATOR_ACTIONS = {
  abort: [Aborted],
  resolve: [Resolved],
  retry: [Retrying, Pending],
} as const satisfies Record<string, readonly WebhookState[]>;
export type WebhookOperatorAction = keyof typeof WEBHOOK_OPERATOR_ACTIONS;

/** Whether an operator may take `action` on a webhook in `state`. */
export function operatorActionAllowed(action: WebhookOperatorAction, state: WebhookState): boolean {
  return WEBHOOK_OPERATOR_ACTIONS[action].some((to) => canTransition(state, to, 'operator'));
}

const STATE_NAMES: Readonly<Record<number, string>> = Object.fromEntries(
  Object.entries(WebhookState).map(([name, state]) => [state, name]),
);

/** The name of a state: `Failed`, or `State 9` for a number no one knows. */
export function webhookStateName(state: number): string {
  return STATE_NAMES[state] ?? `State ${state}`;
}
