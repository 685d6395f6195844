import { registrationHealth, type HealthWindowFigures } from '@platform/db';
import type { WebhookRegistrationHealth } from '@platform/shared';
import type { Principal } from '../../auth/principal';
import type { AppDeps } from '../../deps';
import { AppError } from '../../http/errors';
import { visibleRegistrations } from './webhook-registration-service';

const iso = (value: Date | null): string | null => value?.toISOString() ?? null;

function presentWindow(figures: HealthWindowFigures): WebhookRegistrationHealth['lastHour'] {
  // a success rate of requests: an attempt the breaker skipped asked the receiver nothing
  const requests = figures.attempts - figures.skipped;
  return {
    attempts: figures.attempts,
    requests,
    skipped: figures.skipped,
    successes: figures.successes,
    successRate: requests === 0 ? null : figures.successes / requests,
    p50Ms: figures.p50_ms,
    p95Ms: figures.p95_ms,
  };
}

/**
 * The health of a visible registration (`registrationHealth`: one statement, one snapshot);
 * 404 when unknown, deleted or out of scope.
 */
export async function readRegistrationHealth(
  deps: AppDeps,
  principal: Principal,
  id: number,
): Promise<WebhookRegistrationHealth> {
  const visible = await visibleRegistrations(deps.knex, principal).where('r.id', id).first('r.id');
  const row = visible ? await registrationHealth(deps.knex, id) : undefined;
  if (!row) throw new AppError('NotFound', `Webhook registration ${id} was not found`);
  return {
    registrationId: row.id,
    status: row.status,
    disabledReason: row.disabled_reason,
    statusChanged: iso(row.status_changed),
    endpoint: {
      id: row.endpoint_id,
      url: row.endpoint_url,
      origin: row.origin,
      partyId: row.endpoint_party_id,
      lastSuccessAt: iso(row.endpoint_last_success_at),
      lastFailureAt: iso(row.endpoint_last_failure_at),
      sharedWith: row.shared_with,
      sharedWithCount: row.shared_with_count,
    },
    target: row.origin,
    breaker: {
      state: row.breaker_state,
      openUntil: iso(row.open_until),
      consecutiveFailures: row.consecutive_failures,
    },
    holdUntil: iso(row.hold_until),
    rateLimit: row.rate_limit,
    lastHour: presentWindow(row.last_hour),
    lastDay: presentWindow(row.last_day),
    dueCount: row.due_count,
    dueCountCapped: row.due_count_capped,
    oldestDueAt: iso(row.oldest_due_at),
    inFlight: row.in_flight,
    lastSuccessAt: iso(row.last_success_at),
    failingSince: iso(row.failing_since),
  };
}
