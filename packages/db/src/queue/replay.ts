import type { Knex } from 'knex';
import type { OperationSkipReason } from '@platform/shared';
import { groupKeyOf, replayEntityChange, type RecordedEntityChange } from './enqueue';
import { arrays } from './sql';

/** What replaying one change did: wrote its webhook, or why not. */
export type ReplayOutcome =
  'changed' | Extract<OperationSkipReason, 'registration-deleted' | 'not-subscribed'>;

/**
 * Replays recorded changes to one registration, in the caller's transaction, in change id order
 * (the order they were recorded, so each group gets them in its original order), each through
 * enqueue's own fan-out statement (`replayEntityChange`): the same subscription rule, the same body
 * (the webhook references the recorded change), the same group chain. Each new webhook records
 * `actionId` as its last operator action.
 *
 * Locks, before any webhook is written:
 * - the changes, FOR KEY SHARE (the lock the foreign key check takes anyway), so retention cannot
 *   delete a change between this read and the webhook that references it;
 * - the registration's groups of these changes, in (registration, group key) order, the order every
 *   writer of several groups locks them in (`webhooks_operator_apply`, `webhooks_complete`), so a
 *   batch cannot deadlock with a dispatcher releasing the same groups. A group that does not exist
 *   yet is created empty (next_seq 0, open_count 0: as if its webhooks had all been released).
 *
 * Answers the outcome per change id; ids of changes that no longer exist are absent.
 */
export async function replayEntityChanges(
  trx: Knex.Transaction,
  options: {
    /** The registration and its tenant bucket, which every statement pins (docs/scaling.md, R2). */
    registration: { id: number; bucket: number };
    changeIds: readonly number[];
    actionId: number | null;
  },
): Promise<Map<number, ReplayOutcome>> {
  const changes = (await trx('entity_changes')
    .whereIn('id', [...options.changeIds])
    .orderBy('id')
    .forKeyShare()
    .select(
      'id',
      'entity_name as entityName',
      'type',
      'entity_id as entityId',
      'initiator_party_id as initiatorPartyId',
    )) as RecordedEntityChange[];
  const { id: registrationId, bucket } = options.registration;
  const registration = (await trx('webhook_registrations')
    .where({ bucket, id: registrationId })
    .first('should_group', 'deleted')) as { should_group: boolean; deleted: Date | null } | undefined;
  const outcomes = new Map<number, ReplayOutcome>();
  if (!registration || registration.deleted !== null) {
    for (const change of changes) outcomes.set(change.id, 'registration-deleted');
    return outcomes;
  }
  if (registration.should_group && changes.length > 0) {
    // the no-op update takes the row lock of an existing group, in key order
    await trx.raw(
      `insert into webhook_groups as g (registration_id, group_key, next_seq, open_count, bucket)
       select ?, k.group_key, 0, 0, ?::int from (select distinct unnest(?::text[]) as group_key) k
        order by k.group_key
       on conflict on constraint webhook_groups_pkey do update set next_seq = g.next_seq`,
      arrays([registrationId, bucket, changes.map(groupKeyOf)]),
    );
  }
  for (const change of changes) {
    const created = await replayEntityChange(trx, change, registrationId, options.actionId);
    outcomes.set(change.id, created > 0 ? 'changed' : 'not-subscribed');
  }
  return outcomes;
}
