import {
  FINAL_WEBHOOK_STATES,
  operatorActionAllowed,
  WEBHOOK_TRANSITIONS,
  WebhookAuthType,
  WebhookEventType,
  WebhookState,
  webhookStateName,
  type WebhookOperatorAction,
} from '@platform/shared';

export { webhookStateName };

/** Every state in the spec's order (1–7). */
export const WEBHOOK_STATES: readonly WebhookState[] = Object.values(WebhookState);

/** What each state means, for tooltips and the overview. */
export const WEBHOOK_STATE_DESCRIPTIONS: Readonly<Record<number, string>> = {
  [WebhookState.Created]: 'Waiting for its first attempt.',
  [WebhookState.Retrying]: 'An attempt failed; another is scheduled.',
  [WebhookState.Successful]: 'Delivered: the target answered 2xx.',
  [WebhookState.Failed]: 'Every attempt failed. Holds its group until resolved, aborted or retried.',
  [WebhookState.Aborted]: 'Stopped by an operator or a deleted registration; never delivered.',
  [WebhookState.Pending]: 'Waiting behind an earlier webhook of its group.',
  [WebhookState.Resolved]: 'Marked handled by an operator; never delivered.',
};

/** Final states: Successful, Aborted, Resolved. */
export function isFinalState(state: number): boolean {
  return FINAL_WEBHOOK_STATES.includes(state as WebhookState);
}

/** Changes the system makes on its own, without an operator or a registration's deletion. */
const AUTOMATIC_TRANSITIONS = WEBHOOK_TRANSITIONS.filter(
  (t) => t.from !== null && t.by !== 'operator' && t.by !== 'registration-delete',
);

/** States in which the dispatcher may still act on its own (so the screen keeps polling). */
export function isMovingState(state: number): boolean {
  return AUTOMATIC_TRANSITIONS.some((t) => t.from === state);
}

export type WebhookAction = WebhookOperatorAction;

/** `An Aborted`, `A Successful`: the indefinite article a state name takes. */
export function withArticle(name: string): string {
  return `${/^[AEIOU]/i.test(name) ? 'An' : 'A'} ${name}`;
}

/** Whether an operator may take `action` on a webhook in `state`, and why not. */
export function actionAvailability(
  action: WebhookAction,
  state: number,
): { allowed: boolean; reason?: string } {
  if (operatorActionAllowed(action, state as WebhookState)) return { allowed: true };
  const name = webhookStateName(state);
  if (action === 'retry') {
    return { allowed: false, reason: `Only a Failed webhook can be retried; this one is ${name}.` };
  }
  return {
    allowed: false,
    reason: `${withArticle(name)} webhook is final; it cannot be ${action === 'abort' ? 'aborted' : 'resolved'}.`,
  };
}

/** Button labels, confirmation texts and success messages of the operator actions. */
export const WEBHOOK_ACTION_COPY: Readonly<
  Record<WebhookAction, { label: string; title: string; explanation: string; confirm: string; done: string }>
> = {
  abort: {
    label: 'Abort',
    title: 'Abort this webhook?',
    explanation:
      'It will never be delivered or retried. If it holds its group, the next webhook of the group becomes due.',
    confirm: 'Abort webhook',
    done: 'aborted',
  },
  resolve: {
    label: 'Resolve',
    title: 'Mark this webhook resolved?',
    explanation:
      'Use this when the change reached the target another way. It will not be delivered; if it holds its group, the next webhook of the group becomes due.',
    confirm: 'Resolve webhook',
    done: 'resolved',
  },
  retry: {
    label: 'Retry',
    title: 'Retry this webhook?',
    explanation: 'It becomes Retrying and is due at once for one more attempt. It keeps its attempt count.',
    confirm: 'Retry webhook',
    done: 'put back for one more attempt',
  },
};

/** Event type names (docs/webhooks.md#events). */
export const EVENT_TYPE_NAMES: Readonly<Record<number, string>> = {
  [WebhookEventType.Created]: 'Created',
  [WebhookEventType.Updated]: 'Updated',
  [WebhookEventType.Deleted]: 'Deleted',
  [WebhookEventType.ReplaceRelation]: 'ReplaceRelation',
  [WebhookEventType.AddToRelation]: 'AddToRelation',
  [WebhookEventType.RemoveFromRelation]: 'RemoveFromRelation',
};

export function eventTypeName(type: number): string {
  return EVENT_TYPE_NAMES[type] ?? `Type ${type}`;
}

/** Target authorization type names (docs/dispatcher.md#what-the-target-receives). */
export const AUTH_TYPE_NAMES: Readonly<Record<number, string>> = {
  [WebhookAuthType.NoAuth]: 'No Auth',
  [WebhookAuthType.BasicAuth]: 'Basic Auth',
  [WebhookAuthType.PlatformBearerInHeader]: 'Platform signed Bearer Token in Header',
  [WebhookAuthType.PlatformBearerInBody]: 'Platform signed Bearer Token in Body',
  [WebhookAuthType.TargetApiToken]: 'Target API Token',
};

export function authTypeName(type: number): string {
  return AUTH_TYPE_NAMES[type] ?? `Type ${type}`;
}
