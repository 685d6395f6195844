import type { RotateSecretResult, WebhookRegistrationRead } from '@platform/shared';
import { useId, useState } from 'react';
import { ActionButton } from '../../../components/ui/action-button';
import type { WindowOperation } from '../../webhook-operations/api/start-webhook-operation';
import { RotatedSecretPanel, RotateSecretDialog } from './rotate-secret';
import { TestEventForm } from './test-event-form';
import { WINDOW_OPERATION_COPY, WindowOperationDialog } from './window-operation-dialog';

/** The permission every recovery tool needs; without it they are disabled and the section says why. */
const RECOVERY_PERMISSION = 'Webhook.Update';

/**
 * The tools an operator reaches for after an incident: recover the Failed webhooks of a window,
 * replay a window's changes, send a test event, rotate the signing secret.
 */
export function RecoverySection({
  registration,
  mayUpdate,
  failingSince,
}: {
  registration: Pick<WebhookRegistrationRead, 'id' | 'enabledEvents'>;
  mayUpdate: boolean;
  failingSince: string | null | undefined;
}) {
  const [windowOperation, setWindowOperation] = useState<WindowOperation | null>(null);
  const [rotating, setRotating] = useState(false);
  const [rotated, setRotated] = useState<RotateSecretResult | null>(null);
  const missingPermission = mayUpdate ? undefined : RECOVERY_PERMISSION;
  const permissionNoticeId = useId();

  return (
    <section className="card section" aria-labelledby="recovery-heading" data-testid="recovery-tools">
      <h2 id="recovery-heading" className="section__title">
        Recovery
      </h2>
      {!mayUpdate && (
        <p className="notice notice--warn" id={permissionNoticeId} data-testid="recovery-permission-note">
          Your account lacks the {RECOVERY_PERMISSION} permission, so these actions are disabled: recover,
          replay, test event and secret rotation.
        </p>
      )}
      <div className="action-bar action-bar--wide" role="group" aria-label="Recovery actions">
        {(['recover', 'replay'] as const).map((kind) => (
          <ActionButton
            key={kind}
            availability={{ allowed: true }}
            missingPermission={missingPermission}
            permissionNoticeId={permissionNoticeId}
            onClick={() => setWindowOperation(kind)}
          >
            {WINDOW_OPERATION_COPY[kind].label}
          </ActionButton>
        ))}
        <ActionButton
          availability={{ allowed: true }}
          missingPermission={missingPermission}
          permissionNoticeId={permissionNoticeId}
          onClick={() => setRotating(true)}
        >
          Rotate signing secret…
        </ActionButton>
      </div>

      <TestEventForm
        registration={registration}
        mayUpdate={mayUpdate}
        permissionNoticeId={permissionNoticeId}
      />

      {/* one dialog each, so a recover and a replay never share a window or a count */}
      {(['recover', 'replay'] as const).map((kind) => (
        <WindowOperationDialog
          key={kind}
          registrationId={registration.id}
          kind={kind}
          open={windowOperation === kind}
          failingSince={failingSince}
          onClose={() => setWindowOperation(null)}
        />
      ))}
      <RotateSecretDialog
        registrationId={registration.id}
        open={rotating}
        onClose={() => setRotating(false)}
        onRotated={setRotated}
      />
      {/* after the dialog, so focus lands on the new secret, not back on the button */}
      {rotated && (
        <RotatedSecretPanel
          registrationId={registration.id}
          result={rotated}
          onDismiss={() => setRotated(null)}
        />
      )}
    </section>
  );
}
