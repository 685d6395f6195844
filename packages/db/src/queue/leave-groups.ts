import type { Knex } from 'knex';
import type { GroupRelease } from './release-groups';

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
