import type { WebhookRegistrationRead } from '@platform/shared';
import { useState, type ReactNode } from 'react';
import { ActionButton } from '../../../components/ui/action-button';
import { Button } from '../../../components/ui/button';
import { DateTime } from '../../../components/ui/date-time';
import { ConfirmDialog } from '../../../components/ui/dialog';
import { useToast } from '../../../components/ui/toast';
import { errorMessage } from '../../../lib/api-client';
import { DISABLED_REASON_TEXT } from '../../../lib/registration-health';
import { usePermission } from '../../../lib/use-session';
import { useSetRegistrationStatus } from '../api/set-registration-status';
import {
  actionIntent,
  REGISTRATION_ACTION_COPY,
  registrationActionAvailability,
  type RegistrationAction,
} from '../utils/registration-actions';

type Registration = Pick<WebhookRegistrationRead, 'id' | 'status' | 'disabledReason' | 'statusChanged'>;

/**
 * Asks before pausing, resuming or re-enabling a registration and reports the outcome at once: a
 * success notification, or the ProblemDetails detail of the refusal.
 */
export function useRegistrationStatusConfirmation(registration: Registration): {
  ask: (action: RegistrationAction) => void;
  dialog: ReactNode;
} {
  const toast = useToast();
  const setStatus = useSetRegistrationStatus();
  const [asked, setAsked] = useState<RegistrationAction | null>(null);
  // the intent is fixed when asked: a status the poll brings in meanwhile does not reword the dialog
  const [intent, setIntent] = useState(actionIntent('pause', registration.status));
  const copy = REGISTRATION_ACTION_COPY[intent];
  const title = copy.title.replace('{id}', String(registration.id));

  const confirm = async () => {
    if (!asked) return;
    try {
      await setStatus.mutateAsync({ id: registration.id, action: asked });
      toast.success(`Registration ${registration.id} ${copy.done}.`);
    } catch (error) {
      toast.error(`Registration ${registration.id} was not ${copy.done}: ${errorMessage(error)}`);
    } finally {
      setAsked(null);
    }
  };

  const dialog = (
    <ConfirmDialog
      open={asked !== null}
      title={title}
      confirmLabel={copy.confirm}
      confirmVariant={intent === 'pause' ? 'danger' : 'primary'}
      busy={setStatus.isPending}
      onConfirm={confirm}
      onCancel={() => setAsked(null)}
    >
      <p>{copy.explanation}</p>
    </ConfirmDialog>
  );
  return {
    ask: (action) => {
      setIntent(actionIntent(action, registration.status));
      setAsked(action);
    },
    dialog,
  };
}

/** Pause and Resume, each disabled with its reason when it does not apply or is not permitted. */
export function RegistrationStatusActions({
  registration,
  ask,
}: {
  registration: Registration;
  ask: (action: RegistrationAction) => void;
}) {
  const mayUpdate = usePermission('Webhook.Update');
  return (
    <div className="action-bar" role="group" aria-label="Delivery actions">
      {(['pause', 'resume'] as const).map((action) => (
        <ActionButton
          key={action}
          variant={action === 'resume' ? 'primary' : 'secondary'}
          availability={registrationActionAvailability(action, registration.status)}
          missingPermission={mayUpdate ? undefined : 'Webhook.Update'}
          onClick={() => ask(action)}
        >
          {REGISTRATION_ACTION_COPY[action].label}
        </ActionButton>
      ))}
    </div>
  );
}

/**
 * Why deliveries are stopped: the dispatcher disabled the registration (410 Gone, or sustained
 * failure), with a Re-enable action; or an operator paused it.
 */
export function StatusBanner({
  registration,
  onReEnable,
  mayReEnable,
}: {
  registration: Registration;
  onReEnable: () => void;
  mayReEnable: boolean;
}) {
  if (registration.status === 'active') return null;
  const disabled = registration.status === 'disabled';
  const reason = registration.disabledReason
    ? DISABLED_REASON_TEXT[registration.disabledReason]
    : 'The dispatcher stopped its deliveries';
  return (
    <section
      className={`banner ${disabled ? 'banner--danger' : 'banner--warn'}`}
      aria-labelledby="status-banner-heading"
      data-testid={disabled ? 'disabled-banner' : 'paused-banner'}
    >
      <div className="banner__text">
        <h2 id="status-banner-heading" className="banner__title">
          {disabled ? `Disabled: ${reason}.` : 'Paused by an operator.'}
        </h2>
        <p>
          No webhook is sent
          {registration.statusChanged && (
            <>
              {' '}
              since <DateTime value={registration.statusChanged} />
            </>
          )}
          .{' '}
          {disabled
            ? 'Its webhooks are still written and kept; re-enable it once the endpoint is fixed and they are delivered, each group in order.'
            : 'Its webhooks are still written; resume it and they are delivered, each group in order.'}
        </p>
      </div>
      {disabled && mayReEnable && (
        <Button variant="primary" onClick={onReEnable}>
          {REGISTRATION_ACTION_COPY['re-enable'].label}
        </Button>
      )}
    </section>
  );
}
