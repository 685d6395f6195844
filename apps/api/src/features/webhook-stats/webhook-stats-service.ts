import { ATTEMPT_KINDS_WITHOUT_REQUEST, WebhookState, type WebhookStatsRead } from '@platform/shared';
import type { Principal } from '../../auth/principal';
import type { AppDeps } from '../../deps';
import { scopeToParties } from '../../http/scope';

/** How many minutes the attempt figures of the operator overview cover. */
export const STATS_WINDOW_MINUTES = 60;

const ALL_STATES = Object.values(WebhookState);

/** An attempt that sent a request (`attemptSentRequest` of packages/shared, in SQL). */
const SENT = `(a.error_kind is null or a.error_kind not in (${ATTEMPT_KINDS_WITHOUT_REQUEST.map((kind) => `'${kind}'`).join(', ')}))`;

/**
 * The overview figures of the webhooks the caller may see (Admin: all; others their party's),
 * read in one read-only repeatable-read transaction: every figure comes from the same snapshot
 * and the same `now()`, so the counts, the backlog and the chart agree with one another.
 *
 * Cost: the counts by state read every visible webhook (one pass, grouped); the backlog, the
 * blocked groups and the attempt window read partial or time indexes (`webhooks_due`,
 * `webhooks_blocking`, `webhook_attempts_created`). The console polls this every ~10 s per open
 * tab, which is cheap up to millions of webhooks; beyond that the counts want a counter table.
 */
export async function readWebhookStats(deps: AppDeps, principal: Principal): Promise<WebhookStatsRead> {
  return deps.knex.transaction(async (trx) => {
    await trx.raw('set transaction isolation level repeatable read, read only');
    const { rows } = await trx.raw<{ rows: { now: Date; window_start: Date }[] }>(
      `select now() as now, date_trunc('minute', now()) - make_interval(mins => ?) as window_start`,
      [STATS_WINDOW_MINUTES - 1],
    );
    const { now, window_start: windowStart } = rows[0]!;
    const webhooks = () =>
      scopeToParties(
        trx('webhooks as w').join('webhook_registrations as r', 'r.id', 'w.registration_id'),
        'r.party_id',
        principal,
      );
    const attempts = () =>
      scopeToParties(
        trx('webhook_attempts as a')
          .join('webhooks as w', 'w.id', 'a.webhook_id')
          .join('webhook_registrations as r', 'r.id', 'w.registration_id'),
        'r.party_id',
        principal,
      ).where('a.created', '>=', windowStart);

    const stateRows: { state: number; count: number }[] = await webhooks()
      .select('w.state', trx.raw('count(*)::int as count'))
      .groupBy('w.state');
    // due means deliverable now: the webhooks of paused and disabled registrations wait for a
    // resume, not for a dispatcher, so they are counted apart
    const due: {
      due: number;
      oldest_due_seconds: number | null;
      held_paused: number;
      held_disabled: number;
    } = await webhooks()
      .whereIn('w.state', [WebhookState.Created, WebhookState.Retrying])
      .where('w.next_attempt_at', '<=', now)
      .first(
        trx.raw(`(count(*) filter (where r.status = 'active'))::int as due`),
        trx.raw(
          `extract(epoch from ?::timestamptz - min(w.next_attempt_at) filter (where r.status = 'active'))::float8 as oldest_due_seconds`,
          [now],
        ),
        trx.raw(`(count(*) filter (where r.status = 'paused'))::int as held_paused`),
        trx.raw(`(count(*) filter (where r.status = 'disabled'))::int as held_disabled`),
      );
    // not due: leased by a dispatcher (in flight), or waiting for a later attempt (scheduled);
    // the `next_attempt_at > now` range of `webhooks_due`
    const notDue: { in_flight: number; scheduled: number; next_scheduled_at: Date | null } = await webhooks()
      .whereIn('w.state', [WebhookState.Created, WebhookState.Retrying])
      .where('w.next_attempt_at', '>', now)
      .first(
        trx.raw('(count(*) filter (where w.locked_by is not null))::int as in_flight'),
        trx.raw('(count(*) filter (where w.locked_by is null))::int as scheduled'),
        trx.raw('min(w.next_attempt_at) filter (where w.locked_by is null) as next_scheduled_at'),
      );
    // the same rule as GET /api/webhook-groups?blocked=true: one Failed head per held group
    const blocked: { count: number } = await webhooks()
      .where('w.state', WebhookState.Failed)
      .whereNotNull('w.group_key')
      .where('r.should_group_continue_after_fail', false)
      .whereNull('r.deleted')
      .first(trx.raw('count(*)::int as count'));
    const minuteRows: { minute: Date; attempts: number; requests: number; failures: number }[] =
      await attempts()
        .select(
          trx.raw(`date_trunc('minute', a.created) as minute`),
          trx.raw('count(*)::int as attempts'),
          trx.raw(`(count(*) filter (where ${SENT}))::int as requests`),
          trx.raw(`(count(*) filter (where ${SENT} and a.error_kind is not null))::int as failures`),
        )
        .groupByRaw(`date_trunc('minute', a.created)`);
    // latency and failures of the requests only: a skip took no time and asked nobody
    const summary: {
      attempts: number;
      requests: number;
      failures: number;
      p50: number | null;
      p90: number | null;
      p99: number | null;
    } = await attempts().first(
      trx.raw('count(*)::int as attempts'),
      trx.raw(`(count(*) filter (where ${SENT}))::int as requests`),
      trx.raw(`(count(*) filter (where ${SENT} and a.error_kind is not null))::int as failures`),
      ...[50, 90, 99].map((p) =>
        trx.raw(
          `(percentile_cont(${p / 100}) within group (order by a.duration_ms) filter (where ${SENT}))::float8 as p${p}`,
        ),
      ),
    );
    const skipRows: { reason: string; count: number }[] = await attempts()
      .whereRaw(`not ${SENT}`)
      .select('a.error_kind as reason', trx.raw('count(*)::int as count'))
      .groupBy('a.error_kind')
      .orderBy([
        { column: 'count', order: 'desc' },
        { column: 'reason', order: 'asc' },
      ]);

    const byMinute = new Map(minuteRows.map((row) => [row.minute.getTime(), row]));
    const attemptsPerMinute = Array.from({ length: STATS_WINDOW_MINUTES }, (_, index) => {
      const minute = new Date(windowStart.getTime() + index * 60_000);
      const row = byMinute.get(minute.getTime());
      const attempts = row?.attempts ?? 0;
      const requests = row?.requests ?? 0;
      return {
        minute: minute.toISOString(),
        attempts,
        requests,
        failures: row?.failures ?? 0,
        skipped: attempts - requests,
      };
    });
    const byState = new Map(stateRows.map((row) => [Number(row.state), row.count]));
    const round = (ms: number | null) => (ms === null ? null : Math.round(ms * 10) / 10);
    return {
      generatedAt: now.toISOString(),
      countsByState: ALL_STATES.map((state) => ({ state, count: byState.get(state) ?? 0 })),
      window: {
        from: windowStart.toISOString(),
        to: new Date(windowStart.getTime() + STATS_WINDOW_MINUTES * 60_000).toISOString(),
        minutes: STATS_WINDOW_MINUTES,
      },
      attemptsPerMinute,
      attempts: summary.attempts,
      requests: summary.requests,
      failures: summary.failures,
      skipped: summary.attempts - summary.requests,
      skippedByReason: skipRows,
      successRate: summary.requests === 0 ? null : (summary.requests - summary.failures) / summary.requests,
      latencyMs: { p50: round(summary.p50), p90: round(summary.p90), p99: round(summary.p99) },
      dueBacklog: due.due,
      dueHeld: { paused: due.held_paused, disabled: due.held_disabled },
      inFlight: notDue.in_flight,
      scheduled: notDue.scheduled,
      nextScheduledAt: notDue.next_scheduled_at ? notDue.next_scheduled_at.toISOString() : null,
      oldestDueSeconds: due.oldest_due_seconds === null ? null : Math.max(0, due.oldest_due_seconds),
      blockedGroups: blocked.count,
    };
  });
}
