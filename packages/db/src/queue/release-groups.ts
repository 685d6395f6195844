import type { Knex } from 'knex';
import { arrays } from './sql';

/** A group whose head has ended (Successful, Resolved, Aborted, or Failed that may continue). */
export interface GroupRelease {
  registrationId: number;
  groupKey: string;
}

/** The one statement `releaseGroups` sends: a call of `webhook_groups_release` in `FROM` (Citus R1). */
export const RELEASE_GROUPS_SQL =
  'select id from webhook_groups_release(?::int[], ?::text[], p_buckets => ?::int[]) as id';

/**
 * Releases groups: each loses one open webhook, and its oldest Pending (lowest `group_seq`)
 * becomes the new head, Created and due now. One call of `webhook_groups_release`
 * (`functions/webhook-groups-release.ts`), which locks the `webhook_groups` rows first, in the fixed order enqueue uses
 * too, so a release never interleaves with a producer of the group. Must run in the transaction
 * that ended the heads. Returns the promoted webhook ids. `buckets`: the shard group of the groups
 * (docs/scaling.md, R2; absent: every bucket, the one database).
 */
export async function releaseGroups(
  trx: Knex.Transaction,
  releases: readonly GroupRelease[],
  buckets?: readonly number[],
): Promise<number[]> {
  if (releases.length === 0) return [];
  const { rows } = await trx.raw<{ rows: { id: number }[] }>(
    RELEASE_GROUPS_SQL,
    arrays([
      releases.map((r) => r.registrationId),
      releases.map((r) => r.groupKey),
      buckets ? [...buckets] : null,
    ]),
  );
  return rows.map((r) => r.id);
}
