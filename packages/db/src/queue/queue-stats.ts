import type { Knex } from 'knex';
import { CLAIMABLE_WEBHOOK_STATES, WebhookState } from '@platform/shared';
import { sqlList } from './sql';

/** The state of the queue as the dispatcher's metrics report it. */
export interface QueueStats {
  /** Webhooks due and not leased (Created or Retrying, `next_attempt_at` passed), counted up to the cap. */
  due: number;
  /** Seconds the longest-waiting due webhook has been due; 0 when none is. */
  oldestDueSeconds: number;
  /** Groups held by a Failed webhook without continue-after-fail, counted up to the cap. */
  blockedGroups: number;
  /** Targets whose circuit breaker is open or half-open. */
  openBreakers: number;
}

/**
 * Reads the queue gauges in one statement, cheap at any backlog size: the due count and the
 * blocked groups are counted from their partial indexes and stop at `cap` rows (a gauge that
 * saturates at the cap still says "far too many"; an exact count of millions would be a scan
 * per scrape), and the oldest due webhook is the first entry of the due index. A leased
 * webhook's `next_attempt_at` lies in the future, so deliveries in flight are not "due".
 * A group is held by at most one Failed webhook, so counting those counts the groups.
 */
export async function queueStats(knex: Knex, options: { cap: number }): Promise<QueueStats> {
  const { rows } = await knex.raw<{
    rows: { due: number; oldest_due_seconds: number | null; blocked_groups: number; open_breakers: number }[];
  }>(
    `select
       (select count(*) from (
          select 1 from webhooks where state in (${sqlList(CLAIMABLE_WEBHOOK_STATES)}) and next_attempt_at <= now() limit :cap
        ) d)::int as due,
       (select extract(epoch from now() - next_attempt_at)::float8 from (
          select next_attempt_at from webhooks where state in (${sqlList(CLAIMABLE_WEBHOOK_STATES)}) order by next_attempt_at limit 1
        ) o where next_attempt_at <= now()) as oldest_due_seconds,
       (select count(*) from (
          select 1 from webhooks w join webhook_registrations r on r.id = w.registration_id
           where w.state = ${WebhookState.Failed} and w.group_key is not null and not r.should_group_continue_after_fail
           limit :cap
        ) b)::int as blocked_groups,
       (select count(*) from webhook_targets where breaker_state <> 'closed')::int as open_breakers`,
    { cap: options.cap },
  );
  const row = rows[0]!;
  return {
    due: row.due,
    oldestDueSeconds: row.oldest_due_seconds ?? 0,
    blockedGroups: row.blocked_groups,
    openBreakers: row.open_breakers,
  };
}
