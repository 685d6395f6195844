import type { WebhookRegistrationHealth } from '@platform/shared';
import { DateTime } from '../../../components/ui/date-time';
import { errorMessage } from '../../../lib/api-client';
import { useRegistrationHealth } from '../../../lib/registration-health';
import { healthBadge } from '../utils/health-labels';

/** How often each row of the registrations table refreshes its health (one request per row). */
export const LIST_HEALTH_REFRESH_MS = 30_000;

/** The last hour's success rate, and since when it has been failing, of a health answer. */
export function HealthBadge({
  health,
}: {
  health: Pick<WebhookRegistrationHealth, 'lastHour' | 'failingSince'>;
}) {
  const badge = healthBadge(health);
  return (
    <span className="health-badge" data-testid="registration-health">
      <span className={`badge badge--tone-${badge.tone ?? 'none'}`} title={badge.title}>
        {badge.text}
      </span>
      {badge.failingSince && (
        <span className="health-badge__failing" data-testid="registration-failing-since">
          Failing since <DateTime value={badge.failingSince} relative />
        </span>
      )}
    </span>
  );
}

/** A registrations table cell: fetches the row's health and shows its badge. */
export function RegistrationHealthCell({ registrationId }: { registrationId: number }) {
  const health = useRegistrationHealth(registrationId, LIST_HEALTH_REFRESH_MS);
  if (health.data) return <HealthBadge health={health.data} />;
  if (health.isError) {
    return (
      <span className="muted" title={errorMessage(health.error)}>
        Unknown
      </span>
    );
  }
  return <span className="muted">…</span>;
}
