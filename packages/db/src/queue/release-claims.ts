import type { Knex } from 'knex';
import { CLAIMABLE_WEBHOOK_STATES } from '@platform/shared';
import { arrays, inBuckets, sqlList } from './sql';

/** The statement of `releaseClaims` (bindings: the shard group twice, ids, dispatcher id). */
export const RELEASE_CLAIMS_SQL = `update webhooks
        -- now() outside the CASE (Citus refuses a stable function inside one: docs/scaling.md, R4);
        -- least() skips the null of a webhook tried before
        set next_attempt_at = least(case when attempt_count = 1 then created end, now()),
            locked_by = null, attempt_count = attempt_count - 1
      where ${inBuckets('webhooks', '?::int[]')} and id = any(?::bigint[]) and locked_by = ? and state in (${sqlList(CLAIMABLE_WEBHOOK_STATES)})`;

/**
 * Hands claimed webhooks back that this dispatcher will not deliver (it is stopping, they waited
 * too long for a slot, their endpoint is held by a `Retry-After`, their registration was paused
 * or disabled): due now, lease and counted attempt undone. A webhook never tried before gets its
 * place back (due since it was written), so webhooks handed back are not overtaken by later
 * ones. Rows whose lease has passed to another dispatcher are left alone. `buckets`: the shard group
 * of the ids (absent: every bucket, the one database; `inBuckets`).
 */
export async function releaseClaims(
  knex: Knex,
  dispatcherId: string,
  ids: readonly number[],
  buckets?: readonly number[],
): Promise<void> {
  if (ids.length === 0) return;
  const group = buckets ? [...buckets] : null;
  await knex.raw(RELEASE_CLAIMS_SQL, arrays([group, group, ids, dispatcherId]));
}
