import {
  DEFAULT_SECRET_OVERLAP,
  parseOverlap,
  type RotateSecretRequest,
  type RotateSecretResult,
} from '@platform/shared';
import type { Principal } from '../../auth/principal';
import type { AppDeps } from '../../deps';
import { recordOperatorAction } from '../operator-actions/operator-action-service';
import { runWrite } from '../../write-path';
import { lockVisibleRegistration, newSigningSecret } from './webhook-registration-service';

/**
 * Gives a registration a new signing secret, made and sealed exactly like the one of its creation,
 * and answers it this once. The secret it replaces stays valid for `overlap` (default 24h, at most
 * 7d): until then every delivery, and every test event, carries both signatures
 * (`webhook-signature: v1,<new> v1,<old>`; `webhook_deliveries` hands the dispatcher the previous
 * secret while `previous_secret_expires_at` lies ahead), so the receiver can switch secrets at
 * its own pace. `0m` drops the old secret at once. Only one previous secret is kept: a rotation
 * during an overlap ends that overlap, and the secret it replaces becomes the previous one.
 * Audited (`registration.rotate-secret`, with the overlap and its end, never a secret); 404 when
 * the registration is unknown, deleted or out of scope.
 */
export function rotateSigningSecret(
  deps: AppDeps,
  principal: Principal,
  id: number,
  request: RotateSecretRequest,
): Promise<RotateSecretResult> {
  const overlap = request.overlap ?? DEFAULT_SECRET_OVERLAP;
  // the contract refused every overlap parseOverlap cannot read
  const overlapMs = parseOverlap(overlap)!;
  const signingSecret = newSigningSecret();
  return runWrite(deps, principal, async ({ trx, now }) => {
    await lockVisibleRegistration(trx, principal, id);
    const { signing_secret: current } = (await trx('webhook_registrations')
      .where({ id })
      .first('signing_secret')) as { signing_secret: string };
    const expiresAt = overlapMs > 0 ? new Date(now.getTime() + overlapMs) : null;
    await trx('webhook_registrations')
      .where({ id })
      .update({
        signing_secret: deps.secrets.seal(signingSecret),
        previous_signing_secret: expiresAt ? current : null,
        previous_secret_expires_at: expiresAt,
        last_modified: now,
      });
    const previousSecretExpiresAt = expiresAt?.toISOString() ?? null;
    await recordOperatorAction(trx, principal, {
      action: 'registration.rotate-secret',
      registrationId: id,
      changed: 1,
      detail: { overlap, previousSecretExpiresAt },
    });
    return { signingSecret, previousSecretExpiresAt };
  });
}
