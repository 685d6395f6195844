import type { WebhookRegistrationStatus } from '@platform/shared';
import { formatCount } from '../lib/format';
import { HOLD_DESCRIPTION, REGISTRATION_STATUS_COPY } from '../lib/registration-health';
import { Link } from '../lib/router';
import { DateTime } from './ui/date-time';

/** "Held by the receiver until …": the endpoint's `Retry-After` hold, shown only while it lasts. */
export function ReceiverHold({ holdUntil }: { holdUntil: string }) {
  return (
    <span className="hold" title={HOLD_DESCRIPTION} data-testid="receiver-hold">
      Held by the receiver until <DateTime value={holdUntil} relative />
    </span>
  );
}

/**
 * Registrations delivering to one endpoint, as links, each with its status when it is not active
 * ("Registration 4 (Paused)"); `more` counts those not named.
 */
export function RegistrationLinks({
  registrations,
  more = 0,
}: {
  registrations: readonly { id: number; status: WebhookRegistrationStatus }[];
  more?: number;
}) {
  return (
    <>
      {registrations.map((registration, index) => (
        <span key={registration.id}>
          {index > 0 && ', '}
          <Link to={`/registrations/${registration.id}`}>Registration {registration.id}</Link>
          {registration.status !== 'active' && (
            <span className="muted"> ({REGISTRATION_STATUS_COPY[registration.status].name})</span>
          )}
        </span>
      ))}
      {more > 0 && ` and ${formatCount(more)} more`}
    </>
  );
}
