import type { Knex } from 'knex';

/** A group whose head has ended (Successful, Resolved, Aborted, or Failed that may continue). */
export interface GroupRelease {
  registrationId: number;
  groupKey: string;
}

/**
 * Releases groups: each loses one open webhook, and its oldest Pending (lowest `group_seq`)
 * becomes the new head, Created and due now. The `webhook_groups` rows are locked first, in a
 * fixed order, the lock enqueue takes too, so a release never interleaves with a producer of the
 * group. Must run in the transaction that ended the heads (callers that lock the groups earlier
 * lose nothing: the lock is re-entrant). Returns the promoted webhook ids.
 */
export async function releaseGroups(
  trx: Knex.Transaction,
  releases: readonly GroupRelease[],
): Promise<number[]> {
  if (releases.length === 0) return [];
  const bindings = {
    registrationIds: releases.map((r) => r.registrationId),
    groupKeys: releases.map((r) => r.groupKey),
  };
  // The lock is its own statement: a statement that waited for a lock still reads with the
  // snapshot it started with, so it would not see a Pending webhook that the producer holding
  // the lock committed meanwhile, and would strand the group without a head.
  await trx.raw(
    `select 1 from webhook_groups g
       join (select distinct * from unnest(:registrationIds::int[], :groupKeys::text[])) as r(registration_id, group_key)
         using (registration_id, group_key)
      order by g.registration_id, g.group_key
        for update of g`,
    bindings,
  );
  const { rows } = await trx.raw<{ rows: { id: number }[] }>(
    `with released as (
       select distinct registration_id, group_key
         from unnest(:registrationIds::int[], :groupKeys::text[]) as r(registration_id, group_key)
     ),
     decremented as (
       update webhook_groups g set open_count = greatest(g.open_count - 1, 0)
         from released r
        where g.registration_id = r.registration_id and g.group_key = r.group_key
       returning g.registration_id, g.group_key, g.open_count
     ),
     heads as (
       select (select w.id from webhooks w
                where w.registration_id = d.registration_id and w.group_key = d.group_key and w.state = 6
                order by w.group_seq limit 1) as id
         from decremented d
        where d.open_count > 0
     )
     update webhooks w set state = 1, next_attempt_at = now(), last_modified = now()
       from heads h
      where w.id = h.id
     returning w.id`,
    bindings,
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
