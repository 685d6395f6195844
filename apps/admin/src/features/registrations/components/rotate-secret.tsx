import type { RotateSecretResult } from '@platform/shared';
import { useId, useState } from 'react';
import { Button } from '../../../components/ui/button';
import { DateTime } from '../../../components/ui/date-time';
import { ConfirmDialog } from '../../../components/ui/dialog';
import { useToast } from '../../../components/ui/toast';
import { errorMessage } from '../../../lib/api-client';
import { useRotateSecret } from '../api/rotate-secret';
import { OnceSecretPanel } from './once-secret-panel';
import { DEFAULT_OVERLAP_CHOICE, OVERLAP_CHOICES, type OverlapChoice } from '../utils/secret-rotation';

/**
 * The new signing secret of a rotation, shown this once (`OnceSecretPanel`), and until when the
 * previous one still verifies; "Hide the secret" forgets it.
 */
export function RotatedSecretPanel({
  registrationId,
  result,
  onDismiss,
}: {
  registrationId: number;
  result: RotateSecretResult;
  onDismiss: () => void;
}) {
  return (
    <OnceSecretPanel
      title={`New signing secret of registration ${registrationId}`}
      level={3}
      testId="rotated-secret-panel"
      secret={result.signingSecret}
      secretLabel="New signing secret"
      intro={
        <>
          Copy it now and give it to the receiver. <strong>It is shown only this once.</strong>
        </>
      }
    >
      <p data-testid="secret-overlap">
        {result.previousSecretExpiresAt ? (
          <>
            Until <DateTime value={result.previousSecretExpiresAt} relative /> every delivery carries both
            signatures (<code>v1,&lt;new&gt; v1,&lt;old&gt;</code>), so the receiver may switch at any time
            before then; after it, only the new one.
          </>
        ) : (
          <>
            The previous secret no longer verifies: every delivery from now on carries only the new signature.
          </>
        )}
      </p>
      <p className="form__actions">
        <Button onClick={onDismiss}>Hide the secret</Button>
      </p>
    </OnceSecretPanel>
  );
}

/**
 * Asks how long the previous secret should keep verifying, rotates, and hands the answer to
 * `onRotated` (the page shows it once); a refusal is reported at once.
 */
export function RotateSecretDialog({
  registrationId,
  open,
  onClose,
  onRotated,
}: {
  registrationId: number;
  open: boolean;
  onClose: () => void;
  onRotated: (result: RotateSecretResult) => void;
}) {
  const rotate = useRotateSecret();
  const toast = useToast();
  const [overlap, setOverlap] = useState<OverlapChoice>(DEFAULT_OVERLAP_CHOICE);
  const name = useId();

  const confirm = async () => {
    try {
      const result = await rotate.mutateAsync({ id: registrationId, request: { overlap } });
      onRotated(result);
      toast.success(`Registration ${registrationId} has a new signing secret.`);
    } catch (error) {
      toast.error(
        `The signing secret of registration ${registrationId} was not rotated: ${errorMessage(error)}`,
      );
    } finally {
      onClose();
    }
  };

  return (
    <ConfirmDialog
      open={open}
      title={`Rotate the signing secret of registration ${registrationId}?`}
      confirmLabel="Rotate secret"
      busy={rotate.isPending}
      onConfirm={confirm}
      onCancel={onClose}
    >
      <p>
        A new secret signs every delivery from now on; it is shown once, here. During the overlap deliveries
        carry the previous secret’s signature too, so the receiver keeps verifying while it switches.
      </p>
      <fieldset className="fieldset">
        <legend className="fieldset__legend">Overlap with the previous secret</legend>
        {OVERLAP_CHOICES.map((choice) => (
          <label key={choice.value} className="checkbox">
            <input
              type="radio"
              name={name}
              value={choice.value}
              checked={overlap === choice.value}
              onChange={() => setOverlap(choice.value)}
            />
            <span>
              {choice.label} <span className="muted small">{choice.hint}</span>
            </span>
          </label>
        ))}
      </fieldset>
    </ConfirmDialog>
  );
}
