import type { RotateSecretResult } from '@platform/shared';
import { useEffect, useId, useRef, useState } from 'react';
import { Button } from '../../../components/ui/button';
import { CopyButton } from '../../../components/ui/copy-button';
import { DateTime } from '../../../components/ui/date-time';
import { ConfirmDialog } from '../../../components/ui/dialog';
import { useToast } from '../../../components/ui/toast';
import { errorMessage } from '../../../lib/api-client';
import { useRotateSecret } from '../api/rotate-secret';
import { DEFAULT_OVERLAP_CHOICE, OVERLAP_CHOICES, type OverlapChoice } from '../utils/secret-rotation';

/**
 * The new signing secret of a rotation, shown this once (the API never returns it again), and
 * until when the previous one still verifies. Focus moves here so keyboard and screen-reader
 * users meet it first; "Hide the secret" forgets it.
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
  const headingRef = useRef<HTMLHeadingElement>(null);
  const headingId = useId();
  useEffect(() => headingRef.current?.focus(), []);
  return (
    <section className="card secret-panel" aria-labelledby={headingId} data-testid="rotated-secret-panel">
      <h3 id={headingId} ref={headingRef} tabIndex={-1} className="section__title">
        New signing secret of registration {registrationId}
      </h3>
      <p>
        Copy it now and give it to the receiver. <strong>It is shown only this once.</strong>
      </p>
      <div className="secret">
        <code className="secret__value" data-testid="signing-secret" aria-label="New signing secret">
          {result.signingSecret}
        </code>
        <CopyButton text={result.signingSecret} label="Copy secret" />
      </div>
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
    </section>
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
