import type { WebhookOperationRead, WebhookWindowRequest } from '@platform/shared';
import type { Principal } from '../../auth/principal';
import type { AppDeps } from '../../deps';
import { checkRegistration, startOperation } from './operation-service';

/**
 * `POST /api/webhook-registrations/{id}/replay`: new webhooks for the recorded changes of the
 * window [since, until) that the live registration `registrationId` would receive, as an
 * operation (`replayKind`). 404 unless the caller may see the registration.
 */
export async function startReplay(
  deps: AppDeps,
  principal: Principal,
  registrationId: number,
  window: WebhookWindowRequest,
): Promise<WebhookOperationRead> {
  await checkRegistration(deps, principal, registrationId);
  return startOperation(deps, principal, {
    action: 'replay',
    registrationId,
    filter: { since: window.since, ...(window.until === undefined ? {} : { until: window.until }) },
    dryRun: window.dryRun ?? false,
    audit: 'registration.replay',
  });
}
