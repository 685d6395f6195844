import type { Knex } from 'knex';
import { CLAIMABLE_WEBHOOK_STATES } from '@platform/shared';
import { arrays, sqlList } from './sql';

const RELEASE_CLAIMS = `update webhooks
        set next_attempt_at = now(), locked_by = null, attempt_count = attempt_count - 1
      where id = any(?::bigint[]) and locked_by = ? and state in (${sqlList(CLAIMABLE_WEBHOOK_STATES)})`;

/**
 * Hands claimed webhooks back that this dispatcher will not deliver (it is stopping, or they
 * waited too long for a slot): due now, lease and counted attempt undone. Rows whose lease has
 * passed to another dispatcher are left alone.
 */
export async function releaseClaims(knex: Knex, dispatcherId: string, ids: readonly number[]): Promise<void> {
  if (ids.length === 0) return;
  await knex.raw(RELEASE_CLAIMS, arrays([ids, dispatcherId]));
}
