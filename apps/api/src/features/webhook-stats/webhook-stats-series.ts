import { latencyBucketUpperMs, latencyPercentileBuckets, requestRunningCounts } from '@platform/db';
import { SERIES_MAX_HOURS, seriesStep, type WebhookStatsSeriesRead } from '@platform/shared';
import { z } from 'zod';
import type { Principal } from '../../auth/principal';
import type { AppDeps } from '../../deps';
import { timestampText } from '../../http/collection';
import { AppError } from '../../http/errors';
import { scopeToRegistrations } from '../../http/scope';
import { wholeNumberText } from '../../http/validate';

const HOUR_MS = 3_600_000;

/** GET /api/webhook-stats/series: the range (default the last 24 hours) and an optional registration. */
export const WebhookStatsSeriesQuery = z
  .object({
    from: timestampText('from')
      .optional()
      .meta({ description: 'Start of the range (default: 24 hours before `to`).' }),
    to: timestampText('to').optional().meta({ description: 'End of the range (default: now).' }),
    registrationId: wholeNumberText('registrationId', 1, 2147483647).optional().meta({
      description: 'Only this registration’s deliveries (default: every registration the caller may see).',
    }),
  })
  .superRefine((query, ctx) => {
    const to = query.to === undefined ? Date.now() : Date.parse(query.to);
    const from = query.from === undefined ? to - 24 * HOUR_MS : Date.parse(query.from);
    if (from >= to) {
      ctx.addIssue({ code: 'custom', path: ['to'], message: 'to must be after from' });
    } else if (to - from > SERIES_MAX_HOURS * HOUR_MS) {
      ctx.addIssue({
        code: 'custom',
        path: ['from'],
        message: `the range is at most ${SERIES_MAX_HOURS} hours (the per-minute figures are kept that long)`,
      });
    }
  });
export type WebhookStatsSeriesQuery = z.infer<typeof WebhookStatsSeriesQuery>;

/**
 * Deliveries over a range, one point per step (docs/admin.md › Deliveries over time): read from
 * the per-minute figures `webhook_attempt_stats` (registration, minute, latency bucket), never
 * from the attempts themselves, so a day of a busy engine is a few thousand index entries
 * (`webhook_attempt_stats_pkey` for one registration, `webhook_attempt_stats_minute` for all).
 * Requests and skips apart (bucket −1 is an attempt that sent no request), failed requests split
 * into the target's (5xx, timeout, connection) and the others (4xx, redirect), and p50/p95 as the
 * health read computes them: the bucket where the running count of requests reaches 50 / 95 %.
 * The range is aligned to whole steps; steps without attempts are zeros. 404 for a registration
 * out of the caller's scope.
 */
export async function readWebhookStatsSeries(
  deps: AppDeps,
  principal: Principal,
  query: WebhookStatsSeriesQuery,
): Promise<WebhookStatsSeriesRead> {
  const { knex } = deps;
  const toMs = query.to === undefined ? Date.now() : Date.parse(query.to);
  const fromMs = query.from === undefined ? toMs - 24 * HOUR_MS : Date.parse(query.from);
  const step = seriesStep((toMs - fromMs) / 60_000);
  const stepMs = step * 60_000;
  const from = new Date(Math.floor(fromMs / stepMs) * stepMs);
  const to = new Date(Math.ceil(toMs / stepMs) * stepMs);

  const registrations = scopeToRegistrations(knex('webhook_registrations as r'), 'r', principal).select(
    'r.id',
  );
  if (query.registrationId !== undefined) {
    const visible = await registrations.clone().where('r.id', query.registrationId).first();
    if (!visible)
      throw new AppError('NotFound', `Webhook registration ${query.registrationId} was not found`);
    registrations.where('r.id', query.registrationId);
  }
  const { rows } = await knex.raw<{
    rows: {
      at: Date;
      requests: number;
      successes: number;
      target_failures: number;
      skipped: number;
      p50_ms: number | null;
      p95_ms: number | null;
    }[];
  }>(
    `with steps as (
       select generate_series(:from::timestamptz, :to::timestamptz - make_interval(mins => :step::int),
                              make_interval(mins => :step::int)) as at
     ),
     figures as (
       select :from::timestamptz
                + make_interval(mins => :step::int * floor(extract(epoch from s.minute - :from::timestamptz) / 60 / :step::int)::int) as at,
              s.bucket, sum(s.attempts) as attempts, sum(s.successes) as successes,
              sum(s.target_failures) as target_failures
         from webhook_attempt_stats s
        where s.minute >= :from and s.minute < :to and s.registration_id in :registrations
        group by 1, 2
     ),
     running as (
       select f.*,
              ${requestRunningCounts({ bucket: 'f.bucket', attempts: 'f.attempts', partition: 'f.at' })}
         from figures f
     ),
     points as (
       select at,
              coalesce(sum(attempts) filter (where bucket >= 0), 0)::int as requests,
              coalesce(sum(successes), 0)::int as successes,
              coalesce(sum(target_failures) filter (where bucket >= 0), 0)::int as target_failures,
              coalesce(sum(attempts) filter (where bucket < 0), 0)::int as skipped,
              ${latencyPercentileBuckets}
         from running
        group by at
     )
     select steps.at, coalesce(p.requests, 0) as requests, coalesce(p.successes, 0) as successes,
            coalesce(p.target_failures, 0) as target_failures, coalesce(p.skipped, 0) as skipped,
            ${latencyBucketUpperMs('p.p50_bucket')} as p50_ms, ${latencyBucketUpperMs('p.p95_bucket')} as p95_ms
       from steps left join points p using (at)
      order by steps.at`,
    { from, to, step, registrations },
  );
  return {
    from: from.toISOString(),
    to: to.toISOString(),
    stepMinutes: step,
    registrationId: query.registrationId ?? null,
    points: rows.map((row) => ({
      at: row.at.toISOString(),
      requests: row.requests,
      successes: row.successes,
      targetFailures: row.target_failures,
      otherFailures: Math.max(row.requests - row.successes - row.target_failures, 0),
      skipped: row.skipped,
      p50Ms: row.p50_ms,
      p95Ms: row.p95_ms,
    })),
  };
}
