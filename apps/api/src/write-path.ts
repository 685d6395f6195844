import { enqueueEntityChange, type Knex } from '@platform/db';
import { currentTraceContext } from '@platform/tracing';
import type { WebhookEventType } from '@platform/shared';
import type { Principal } from './auth/principal';
import type { AppDeps } from './deps';

/** What a write sees: its transaction, who writes, and when. */
export interface WriteContext {
  trx: Knex.Transaction;
  principal: Principal;
  now: Date;
  /**
   * Change capture: records that `entityName` `entityId` was created, updated or deleted, with its
   * full read shape, and fans it out to the subscribed registrations of the writer's party.
   */
  capture(
    entityName: string,
    type: WebhookEventType & (1 | 2 | 3),
    entityId: number,
    entity: unknown,
  ): Promise<void>;
}

/**
 * The one write path: every service write runs in here, in one transaction, so the entity, its
 * entity_changes row and its webhooks land together or not at all. The capture's statement also
 * queues the NOTIFY that wakes the dispatchers (one per transaction, delivered on commit).
 */
export function runWrite<T>(
  deps: AppDeps,
  principal: Principal,
  write: (context: WriteContext) => Promise<T>,
): Promise<T> {
  return deps.knex.transaction(async (trx) => {
    const result = await write({
      trx,
      principal,
      now: deps.now(),
      capture: async (entityName, type, entityId, entity) => {
        await enqueueEntityChange(trx, {
          entityName,
          type,
          entityId,
          entity,
          initiatorPartyId: principal.partyId,
          initiatorAccountId: principal.accountId,
          // undefined unless tracing is on: then the fan-out writes no trace column
          traceContext: currentTraceContext(),
        });
      },
    });
    return result;
  });
}
