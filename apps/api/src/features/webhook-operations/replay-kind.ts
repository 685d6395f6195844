import type { WebhookWindowRequest } from '@platform/shared';
import { replayEntityChanges } from '@platform/db';
import type { BatchResult, OperationKind } from './operation-kinds';

/**
 * A replay (docs/webhooks.md › Replay): a new webhook for every recorded entity change created in
 * the window that the registration would receive (its live events, of its own party's initiators:
 * `webhook_subscriptions`, the rule enqueue fans out by), in change id order, each through
 * enqueue's own statement, so it carries the change's body as recorded and enters its group as the
 * registration groups now, behind the group's open webhooks.
 *
 * The items are change ids, chosen when the replay is asked; the registration was found in the
 * caller's scope then, and a change reaches it only from its own party, so they are in scope too.
 */
export const replayKind: OperationKind = {
  select: async (trx, operation) => {
    const window = operation.filter as Pick<WebhookWindowRequest, 'since' | 'until'>;
    const registration = (await trx('webhook_registrations')
      .where({ bucket: operation.bucket, id: operation.registration_id })
      .first('party_id')) as { party_id: number };
    const changes = trx('entity_changes as c')
      .select(trx.raw('?::bigint', [operation.id]), 'c.id')
      // implied by the subscription below; said here so the window is read through
      // entity_changes_party_created rather than the whole table
      .where('c.initiator_party_id', registration.party_id)
      .where('c.created', '>=', window.since)
      .whereExists((subscribed) =>
        subscribed
          .from(
            trx.raw('webhook_subscriptions(?::int, c.initiator_party_id, c.entity_name, c.type) s', [
              operation.bucket!,
            ]),
          )
          .where('s.registration_id', operation.registration_id),
      );
    if (window.until !== undefined) changes.where('c.created', '<', window.until);
    const inserted = await trx.raw(
      `insert into webhook_operation_items (operation_id, item_id) ${changes.toQuery()}`,
    );
    return (inserted as { rowCount: number }).rowCount;
  },
  apply: async (trx, operation, ids) => {
    const outcomes = await replayEntityChanges(trx, {
      registration: { id: operation.registration_id!, bucket: operation.bucket! },
      changeIds: ids,
      actionId: operation.audit_id,
    });
    const result: BatchResult = { changed: 0, skipped: {} };
    for (const id of ids) {
      // a change retention deleted since the replay selected it is gone
      const outcome = outcomes.get(id) ?? 'pruned';
      if (outcome === 'changed') result.changed++;
      else result.skipped[outcome] = (result.skipped[outcome] ?? 0) + 1;
    }
    return result;
  },
};
