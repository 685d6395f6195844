import type { Knex } from 'knex';
import { CLAIMABLE_WEBHOOK_STATES, WebhookState } from '@platform/shared';
import { sqlList } from './sql';

/** Whose due webhooks a backlog gauge counts: registrations that may deliver, paused ones, disabled ones. */
export type BacklogStatus = 'active' | 'paused' | 'disabled';
export const BACKLOG_STATUSES: readonly BacklogStatus[] = ['active', 'paused', 'disabled'];

/** The state of the queue as the dispatcher's metrics report it. */
export interface QueueStats {
  /**
   * Webhooks due and not leased (Created or Retrying, `next_attempt_at` passed), counted up to the
   * cap, by their registration's status: `active` (deleted ones too: the claim clears their rows)
   * is what the dispatchers can deliver; `paused` and `disabled` wait for an operator.
   */
  due: Record<BacklogStatus, number>;
  /** Seconds the longest-waiting due webhook has been due, by the same status; 0 when none is. */
  oldestDueSeconds: Record<BacklogStatus, number>;
  /** Groups held by a Failed webhook without continue-after-fail, counted up to the cap. */
  blockedGroups: number;
  /** Targets whose circuit breaker is open or half-open. */
  openBreakers: number;
}

const CLAIMABLE = sqlList(CLAIMABLE_WEBHOOK_STATES);

/**
 * The queue gauges in one statement, cheap at any backlog size (docs/dispatcher.md › Metrics):
 * - `held`: the paused and disabled registrations (few; read whole) with their earliest due
 *   webhook, one probe of `webhooks_claimable` each; their counts stop at `cap` rows per status.
 * - `active`, when nothing held is due (the usual case): the due count from the partial index
 *   `webhooks_due`, stopping at `cap`, and the oldest its first entry, as before statuses.
 *   When held webhooks are due: the total less the held counts while the total is under the cap;
 *   otherwise (and for the oldest) read per active registration from `webhooks_claimable`, one
 *   probe per registration with claimable rows, the count stopping at `cap`.
 * A gauge that saturates at the cap still says "far too many"; an exact count of millions would
 * be a scan per scrape. A leased webhook's `next_attempt_at` lies in the future, so deliveries
 * in flight are not "due". A group is held by at most one Failed webhook, so counting those
 * counts the groups.
 */
export const QUEUE_STATS_SQL = `
  with held_registrations as (
    select r.id, r.status::text as status, f.first_due
      from webhook_registrations r
     cross join lateral (
       select w.next_attempt_at as first_due from webhooks w
        where w.registration_id = r.id and w.state in (${CLAIMABLE}) and w.next_attempt_at <= now()
        order by w.next_attempt_at limit 1) f
     where r.status in ('paused', 'disabled') and r.deleted is null
  ),
  held as (
    select s.status,
           (select count(*) from (
              select 1 from held_registrations h
               cross join lateral (
                 select 1 from webhooks w
                  where w.registration_id = h.id and w.state in (${CLAIMABLE}) and w.next_attempt_at <= now()
                  limit :cap) x
               where h.status = s.status
               limit :cap) c)::int as due,
           (select min(first_due) from held_registrations h where h.status = s.status) as oldest
      from (values ('paused'), ('disabled')) as s(status)
  ),
  total as (
    select count(*)::int as due from (
      select 1 from webhooks where state in (${CLAIMABLE}) and next_attempt_at <= now() limit :cap) d
  ),
  active as (
    select case
             when not exists (select 1 from held_registrations) then (select due from total)
             when (select due from total) < :cap then (select due from total) - (select sum(due) from held)::int
             else (select count(*) from (
                     select 1 from webhook_registrations r
                      cross join lateral (
                        select 1 from webhooks w
                         where w.registration_id = r.id and w.state in (${CLAIMABLE}) and w.next_attempt_at <= now()
                         limit :cap) x
                      where r.status = 'active' or r.deleted is not null
                      limit :cap) c)::int
           end as due,
           case
             when not exists (select 1 from held_registrations) then
               (select next_attempt_at from webhooks where state in (${CLAIMABLE})
                 order by next_attempt_at limit 1)
             else (select min(f.first_due) from webhook_registrations r
                    cross join lateral (
                      select w.next_attempt_at as first_due from webhooks w
                       where w.registration_id = r.id and w.state in (${CLAIMABLE})
                       order by w.next_attempt_at limit 1) f
                    where r.status = 'active' or r.deleted is not null)
           end as oldest
  ),
  statuses as (
    select 'active' as status, due, oldest from active
    union all
    select status, due, oldest from held
  )
  select json_object_agg(status, due) as due,
         json_object_agg(status, coalesce(greatest(extract(epoch from now() - oldest), 0), 0)::float8)
           as oldest_due_seconds,
         (select count(*) from (
            select 1 from webhooks w join webhook_registrations r on r.id = w.registration_id
             where w.state = ${WebhookState.Failed} and w.group_key is not null and not r.should_group_continue_after_fail
             limit :cap
          ) b)::int as blocked_groups,
         (select count(*) from webhook_targets where breaker_state <> 'closed')::int as open_breakers
    from statuses`;

/** Reads the queue gauges (`QUEUE_STATS_SQL`). */
export async function queueStats(knex: Knex, options: { cap: number }): Promise<QueueStats> {
  const { rows } = await knex.raw<{
    rows: {
      due: Record<BacklogStatus, number>;
      oldest_due_seconds: Record<BacklogStatus, number>;
      blocked_groups: number;
      open_breakers: number;
    }[];
  }>(QUEUE_STATS_SQL, { cap: options.cap });
  const row = rows[0]!;
  return {
    due: row.due,
    oldestDueSeconds: row.oldest_due_seconds,
    blockedGroups: row.blocked_groups,
    openBreakers: row.open_breakers,
  };
}
