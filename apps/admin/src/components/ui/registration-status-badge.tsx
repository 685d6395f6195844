import type { WebhookRegistrationStatus } from '@platform/shared';
import { REGISTRATION_STATUS_COPY } from '../../lib/registration-health';

/** A registration's delivery status (active, paused, disabled), coloured by status. */
export function RegistrationStatusBadge({ status }: { status: WebhookRegistrationStatus }) {
  const copy = REGISTRATION_STATUS_COPY[status];
  return (
    <span
      className={`badge badge--status-${status}`}
      title={copy.description}
      data-testid="registration-status"
    >
      {copy.name}
    </span>
  );
}
