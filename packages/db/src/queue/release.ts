import type { Knex } from 'knex';

/** A group whose head has ended (Successful, Resolved, Aborted, or Failed that may continue). */
export interface GroupRelease {
  registrationId: number;
  groupKey: string;
}

/**
 * Releases groups: each loses one open webhook, and its oldest Pending (lowest `group_seq`)
 * becomes the new head, Created and due now. One call of `webhook_groups_release` (migration
 * 20261125000000), which locks the `webhook_groups` rows first, in the fixed order enqueue uses
 * too, so a release never interleaves with a producer of the group. Must run in the transaction
 * that ended the heads. Returns the promoted webhook ids.
 */
export async function releaseGroups(
  trx: Knex.Transaction,
  releases: readonly GroupRelease[],
): Promise<number[]> {
  if (releases.length === 0) return [];
  const { rows } = await trx.raw<{ rows: { id: number }[] }>(
    'select id from webhook_groups_release(?::int[], ?::text[]) as id',
    [releases.map((r) => r.registrationId), releases.map((r) => r.groupKey)] as unknown as Knex.RawBinding[],
  );
  return rows.map((r) => r.id);
}

/**
 * Takes Pending webhooks out of their chain (an operator aborted or resolved them before their
 * turn): the group has one open webhook fewer, and no promotion happens since its head still
 * holds it. Must run in the transaction that ended them.
 */
export async function leaveGroups(trx: Knex.Transaction, leaving: readonly GroupRelease[]): Promise<void> {
  if (leaving.length === 0) return;
  await trx.raw(
    `with leaving as (
       select registration_id, group_key, count(*)::int as n
         from unnest(:registrationIds::int[], :groupKeys::text[]) as r(registration_id, group_key)
        group by 1, 2
     ),
     locked as (
       select g.registration_id, g.group_key, l.n
         from webhook_groups g
         join leaving l using (registration_id, group_key)
        order by g.registration_id, g.group_key
          for update of g
     )
     update webhook_groups g set open_count = greatest(g.open_count - l.n, 0)
       from locked l
      where g.registration_id = l.registration_id and g.group_key = l.group_key`,
    {
      registrationIds: leaving.map((r) => r.registrationId),
      groupKeys: leaving.map((r) => r.groupKey),
    },
  );
}
