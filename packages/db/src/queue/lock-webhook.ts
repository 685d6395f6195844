import type { Knex } from 'knex';
import type { WebhookState } from '@platform/shared';

/** A webhook as an operator action sees it, locked. */
export interface LockedWebhook {
  id: number;
  registration_id: number;
  state: WebhookState;
  group_key: string | null;
  /** Its registration lets later webhooks of the group go on after a failure. */
  continue_after_fail: boolean;
  registration_deleted: Date | null;
}

/**
 * Locks a webhook for an operator action, and first its group's row. The group row comes first,
 * as in enqueue and release, so this never waits on a webhook while a releaser of its group waits
 * on us; and, locked in a statement of its own, it makes every later statement of the transaction
 * see each webhook committed to the group so far (a single statement would keep the snapshot it
 * took before waiting for the lock, and could miss the Pending webhook to promote). The caller has
 * read `webhook` already (a webhook's group never changes, so it can be read before the lock).
 */
export async function lockWebhook(
  trx: Knex.Transaction,
  webhook: { id: number; registration_id: number; group_key: string | null },
): Promise<LockedWebhook> {
  if (webhook.group_key !== null) {
    await trx('webhook_groups')
      .where({ registration_id: webhook.registration_id, group_key: webhook.group_key })
      .forUpdate()
      .first('open_count');
  }
  const locked: LockedWebhook | undefined = await trx('webhooks as w')
    .join('webhook_registrations as r', 'r.id', 'w.registration_id')
    .where('w.id', webhook.id)
    .forUpdate('w')
    .first(
      'w.id',
      'w.registration_id',
      'w.state',
      'w.group_key',
      'r.should_group_continue_after_fail as continue_after_fail',
      'r.deleted as registration_deleted',
    );
  return locked!;
}
