import type { AttemptResult, ClaimedWebhook, HealthPolicy } from '@platform/db';
import { WebhookState } from '@platform/shared';

/** The health policy the queue tests record with: a breaker that opens after 3 target failures. */
export const TEST_HEALTH_POLICY: HealthPolicy = {
  breakerFailures: 3,
  breakerCooldownMs: 60_000,
  breakerMaxCooldownMs: 600_000,
  disableAfterMs: 5 * 86_400_000,
  disableMinAttempts: 10,
};

/** A result for a claimed webhook as the dispatcher records it: a 200 in 3 ms unless `overrides` say otherwise. */
export function attemptResult(
  claimed: Pick<ClaimedWebhook, 'id' | 'registration_id' | 'target_id' | 'group_key' | 'attempt'>,
  overrides: Partial<AttemptResult> = {},
): AttemptResult {
  return {
    webhookId: claimed.id,
    registrationId: claimed.registration_id,
    targetId: claimed.target_id,
    groupKey: claimed.group_key,
    attempt: claimed.attempt,
    startedAt: new Date(),
    durationMs: 3,
    statusCode: 200,
    errorKind: null,
    responseBody: 'ok',
    state: WebhookState.Successful,
    retryDelayMs: null,
    holdMs: null,
    releasesGroup: true,
    ...overrides,
  };
}
