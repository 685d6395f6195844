import type { Knex } from 'knex';
import { claimWebhooks, type ClaimedWebhook } from './claim';
import type { HealthPolicy } from './complete';
import type { EntityChangeInput } from './enqueue';

/** An update of Unit `entityId` by `partyId`: the change the queue tests enqueue. */
export const unitChange = (partyId: number, entityId: number): EntityChangeInput => ({
  entityName: 'Unit',
  type: 2,
  entityId,
  entity: { id: entityId },
  initiatorPartyId: partyId,
  initiatorAccountId: null,
});

/** The health policy the queue tests record with: a breaker that opens after 3 target failures. */
export const TEST_HEALTH_POLICY: HealthPolicy = {
  breakerFailures: 3,
  breakerCooldownMs: 60_000,
  breakerMaxCooldownMs: 600_000,
  disableAfterMs: 5 * 86_400_000,
  disableMinAttempts: 10,
};

/** A claim as a dispatcher holding nothing sends it: every target's room is `room` (default: the batch). */
export async function claim(
  knex: Knex,
  options: { batch: number; leaseMs: number; dispatcherId: string; room?: number },
): Promise<ClaimedWebhook[]> {
  const claimed = await claimWebhooks(knex, {
    ...options,
    rooms: new Map(),
    defaultRoom: options.room ?? options.batch,
  });
  return claimed.leased;
}
