import type { WebhookRegistrationStatus } from '@platform/shared';

/** The API's registration actions (`POST /api/webhook-registrations/{id}/pause | resume`). */
export type RegistrationAction = 'pause' | 'resume';

/** What the operator asks for: re-enabling a disabled registration is a resume, said as such. */
export type RegistrationActionIntent = 'pause' | 'resume' | 're-enable';

/** The intent of `action` on a registration in `status`. */
export function actionIntent(
  action: RegistrationAction,
  status: WebhookRegistrationStatus,
): RegistrationActionIntent {
  return action === 'resume' && status === 'disabled' ? 're-enable' : action;
}

/**
 * Whether an operator may pause or resume a registration in `status`, and why not. Pausing a
 * disabled registration is allowed (the operator takes it over); resuming it re-enables it.
 */
export function registrationActionAvailability(
  action: RegistrationAction,
  status: WebhookRegistrationStatus,
): { allowed: boolean; reason?: string } {
  if (action === 'pause') {
    return status === 'paused' ? { allowed: false, reason: 'It is paused already.' } : { allowed: true };
  }
  return status === 'active'
    ? { allowed: false, reason: 'It is active: there is nothing to resume.' }
    : { allowed: true };
}

/** Button labels, confirmation texts and outcome words of the registration actions. */
export const REGISTRATION_ACTION_COPY: Readonly<
  Record<
    RegistrationActionIntent,
    { label: string; title: string; explanation: string; confirm: string; done: string }
  >
> = {
  pause: {
    label: 'Pause',
    title: 'Pause registration {id}?',
    explanation:
      'Its webhooks are still written, but none is sent and no attempt is spent until it is resumed. ' +
      'Deliveries already in flight finish.',
    confirm: 'Pause registration',
    done: 'paused',
  },
  resume: {
    label: 'Resume',
    title: 'Resume registration {id}?',
    explanation:
      'The webhooks written meanwhile are delivered, each group in order. If its target’s circuit ' +
      'breaker is open, the next delivery is its trial, without waiting for the cool-down.',
    confirm: 'Resume registration',
    done: 'resumed',
  },
  're-enable': {
    label: 'Re-enable',
    title: 'Re-enable registration {id}?',
    explanation:
      'Do this once the endpoint is fixed. Its kept webhooks are delivered, each group in order; ' +
      'its failing run starts afresh, and if its target’s circuit breaker is open, the next ' +
      'delivery is its trial.',
    confirm: 'Re-enable registration',
    done: 're-enabled',
  },
};
