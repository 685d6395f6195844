import type { Knex } from 'knex';
import { CLAIMABLE_WEBHOOK_STATES, WebhookState } from '@platform/shared';
import { notifyWebhookDue } from '../notify';
import { arrays, sqlList } from './sql';
import type { GroupRelease } from './release-groups';

/** Where a sweep over the groups stands: the last group looked at, in key order. */
export interface GroupCursor {
  registrationId: number;
  groupKey: string;
}

/** The start of a sweep: before every group (registration ids start at 1). */
export const FIRST_GROUP: GroupCursor = { registrationId: 0, groupKey: '' };

/** A group whose Pending chain has no head, or whose `open_count` is not what its webhooks say. */
export interface GroupToRepair extends GroupRelease {
  openCount: number;
  /** What `open_count` should be: Pending + heads in Created/Retrying + blocking Failed. */
  actualOpen: number;
  /** No webhook holds the group although Pending ones wait: nothing would ever promote them. */
  stranded: boolean;
}

/**
 * The columns `pending`, `heads` (Created/Retrying) and `blocking` (Failed, unless the registration
 * `r` continues after a failure) of the group named by `alias.registration_id`/`alias.group_key`,
 * each counted by index probes.
 */
const groupCounts = (alias: string) => `
  (select count(*) from webhooks w
    where w.registration_id = ${alias}.registration_id and w.group_key = ${alias}.group_key
      and w.state = ${WebhookState.Pending})::int as pending,
  (select count(*) from webhooks w
    where w.registration_id = ${alias}.registration_id and w.group_key = ${alias}.group_key
      and w.state in (${sqlList(CLAIMABLE_WEBHOOK_STATES)}))::int as heads,
  case when r.should_group_continue_after_fail then 0
       else (select count(*) from webhooks w
              where w.registration_id = ${alias}.registration_id and w.group_key = ${alias}.group_key
                and w.state = ${WebhookState.Failed})::int
  end as blocking`;

/**
 * One step of the repair sweep (docs/dispatcher.md#repair-sweep): looks at the next `limit` groups after `after`
 * that have a Pending webhook, the only groups that can be stranded, and answers those that need
 * a repair, plus where to continue (null when the sweep is through).
 *
 * The groups are enumerated by a skip scan of the Pending index (one index probe per group, not
 * one row per Pending webhook), and each is checked with index probes: heads through
 * `webhooks_group_heads`, blocking Failed through `webhooks_blocking`, the chain length through
 * `webhooks_pending`. Reads only, without locks: `repairGroups` checks again under the group lock.
 */
export async function findGroupsToRepair(
  knex: Knex,
  options: { after: GroupCursor; limit: number },
): Promise<{ groups: GroupToRepair[]; examined: number; next: GroupCursor | null }> {
  const { rows } = await knex.raw<{
    rows: {
      registration_id: number;
      group_key: string;
      open_count: number | null;
      actual_open: number;
      stranded: boolean;
      deleted: boolean;
    }[];
  }>(
    `with recursive chains as (
       (select registration_id, group_key from webhooks
         where state = ${WebhookState.Pending} and (registration_id, group_key) > (?::int, ?::text)
         order by registration_id, group_key limit 1)
       union all
       select n.registration_id, n.group_key
         from chains c
         cross join lateral (
           select registration_id, group_key from webhooks
            where state = ${WebhookState.Pending} and (registration_id, group_key) > (c.registration_id, c.group_key)
            order by registration_id, group_key limit 1
         ) n
     ),
     page as (select * from chains limit ?),
     counted as (
       select p.registration_id, p.group_key, g.open_count, r.deleted is not null as deleted,
              ${groupCounts('p')}
         from page p
         join webhook_registrations r on r.id = p.registration_id
         left join webhook_groups g using (registration_id, group_key)
     )
     select registration_id, group_key, open_count, deleted,
            pending + heads + blocking as actual_open,
            heads = 0 and blocking = 0 as stranded
       from counted
      order by registration_id, group_key`,
    [options.after.registrationId, options.after.groupKey, options.limit],
  );
  const last = rows.at(-1);
  return {
    groups: rows
      // a deleted registration's webhooks are aborted with it; nothing there is to be delivered
      .filter((row) => !row.deleted && (row.stranded || row.open_count !== row.actual_open))
      .map((row) => ({
        registrationId: row.registration_id,
        groupKey: row.group_key,
        openCount: row.open_count ?? 0,
        actualOpen: row.actual_open,
        stranded: row.stranded,
      })),
    examined: rows.length,
    next:
      rows.length < options.limit || !last
        ? null
        : { registrationId: last.registration_id, groupKey: last.group_key },
  };
}

/** What `repairGroups` changed. */
export interface GroupRepair {
  /** Webhooks made the head of a stranded group: Created, due now. */
  promoted: { id: number; registrationId: number; groupKey: string }[];
  /** Groups whose `open_count` was set to the number of their open webhooks. */
  recounted: { registrationId: number; groupKey: string; was: number; now: number }[];
}

/**
 * Repairs groups in one transaction: for each, `open_count` becomes the number of its open
 * webhooks (Pending, Created/Retrying heads, and a Failed one that blocks), and when no webhook
 * holds a group that has Pending ones, its lowest-seq Pending becomes Created, due now. Groups of
 * deleted registrations are left alone.
 *
 * The group rows are locked first, in a statement of their own and in the fixed order every
 * writer of a group uses: the repair statement then starts after the lock is held and sees
 * everything committed before it (one statement would keep the snapshot it took before waiting,
 * and could recount a group from before a concurrent enqueue). Under that lock no head can come or
 * go: enqueue, release, operator actions and retries all take it first.
 */
export async function repairGroups(knex: Knex, groups: readonly GroupRelease[]): Promise<GroupRepair> {
  if (groups.length === 0) return { promoted: [], recounted: [] };
  const bindings = arrays([groups.map((g) => g.registrationId), groups.map((g) => g.groupKey)]);
  return knex.transaction(async (trx) => {
    await trx.raw(
      `select 1 from webhook_groups g
         join unnest(?::int[], ?::text[]) as r(registration_id, group_key) using (registration_id, group_key)
        order by g.registration_id, g.group_key
          for update of g`,
      bindings,
    );
    const { rows } = await trx.raw<{
      rows: {
        kind: 'promoted' | 'recounted';
        id: number | null;
        registration_id: number;
        group_key: string;
        was: number | null;
        now: number | null;
      }[];
    }>(
      `with targets as (
         select distinct registration_id, group_key
           from unnest(?::int[], ?::text[]) as t(registration_id, group_key)
       ),
       counted as (
         select t.registration_id, t.group_key, g.open_count,
                ${groupCounts('t')}
           from targets t
           join webhook_groups g using (registration_id, group_key)
           join webhook_registrations r on r.id = t.registration_id
          where r.deleted is null
       ),
       recounted as (
         update webhook_groups g set open_count = c.pending + c.heads + c.blocking
           from counted c
          where g.registration_id = c.registration_id and g.group_key = c.group_key
            and g.open_count <> c.pending + c.heads + c.blocking
         returning g.registration_id, g.group_key, c.open_count as was, g.open_count as now
       ),
       promoted as (
         update webhooks w set state = ${WebhookState.Created}, next_attempt_at = now(), last_modified = now()
           from (select (select p.id from webhooks p
                          where p.registration_id = c.registration_id and p.group_key = c.group_key
                            and p.state = ${WebhookState.Pending}
                          order by p.group_seq limit 1) as id
                   from counted c
                  where c.heads = 0 and c.blocking = 0 and c.pending > 0) h
          where w.id = h.id and w.state = ${WebhookState.Pending}
         returning w.id, w.registration_id, w.group_key
       )
       select 'promoted' as kind, id, registration_id, group_key, null::int as was, null::int as now from promoted
       union all
       select 'recounted', null, registration_id, group_key, was, now from recounted`,
      bindings,
    );
    const promoted = rows
      .filter((row) => row.kind === 'promoted')
      .map((row) => ({ id: row.id!, registrationId: row.registration_id, groupKey: row.group_key }));
    if (promoted.length > 0) await notifyWebhookDue(trx);
    return {
      promoted,
      recounted: rows
        .filter((row) => row.kind === 'recounted')
        .map((row) => ({
          registrationId: row.registration_id,
          groupKey: row.group_key,
          was: row.was!,
          now: row.now!,
        })),
    };
  });
}
