import { useState, type ReactNode } from 'react';
import { errorMessage } from '../lib/api-client';
import { WEBHOOK_ACTION_COPY, type WebhookAction } from '../lib/webhook-states';
import { ConfirmDialog } from './ui/dialog';
import { useToast } from './ui/toast';

/**
 * Asks before an operator action on a webhook and reports its outcome at once: a success
 * notification, or the ProblemDetails detail of the refusal (a 409 when the state moved on).
 * `perform` is the feature's mutation; it invalidates what the action changes.
 */
export function useWebhookActionConfirmation(
  perform: (webhookId: number, action: WebhookAction) => Promise<unknown>,
): {
  ask: (webhookId: number, action: WebhookAction, context?: ReactNode) => void;
  dialog: ReactNode;
} {
  const toast = useToast();
  const [asked, setAsked] = useState<{
    webhookId: number;
    action: WebhookAction;
    context?: ReactNode;
  } | null>(null);
  const [busy, setBusy] = useState(false);

  const confirm = async () => {
    if (!asked) return;
    setBusy(true);
    try {
      await perform(asked.webhookId, asked.action);
      toast.success(`Webhook ${asked.webhookId} ${WEBHOOK_ACTION_COPY[asked.action].done}.`);
    } catch (error) {
      toast.error(
        `Webhook ${asked.webhookId} was not ${WEBHOOK_ACTION_COPY[asked.action].done}: ${errorMessage(error)}`,
      );
    } finally {
      setBusy(false);
      setAsked(null);
    }
  };

  const copy = asked ? WEBHOOK_ACTION_COPY[asked.action] : undefined;
  const dialog = (
    <ConfirmDialog
      open={asked !== null}
      title={copy ? copy.title.replace('this webhook', `webhook ${asked!.webhookId}`) : ''}
      confirmLabel={copy?.confirm ?? ''}
      confirmVariant={asked?.action === 'retry' ? 'primary' : 'danger'}
      busy={busy}
      onConfirm={confirm}
      onCancel={() => setAsked(null)}
    >
      {asked?.context}
      <p>{copy?.explanation}</p>
    </ConfirmDialog>
  );
  return { ask: (webhookId, action, context) => setAsked({ webhookId, action, context }), dialog };
}
