import { z } from 'zod';

const timestamp = z.iso.datetime({ offset: true });
const count = z.number().int().min(0);
const milliseconds = z.number().min(0).nullable();

/** GET /api/webhook-stats: the operator overview of the caller's webhooks, in one answer. */
export const WebhookStatsRead = z
  .object({
    generatedAt: timestamp.meta({ description: 'The database time the figures were taken at.' }),
    countsByState: z.array(z.object({ state: z.number().int(), count })).meta({
      description: 'Webhooks per state (1 Created … 7 Resolved), every state listed, zeros included.',
    }),
    window: z
      .object({ from: timestamp, to: timestamp, minutes: z.number().int() })
      .meta({ description: 'The attempt figures below cover [from, to): the last hour, whole minutes.' }),
    attemptsPerMinute: z
      .array(
        z.object({ minute: timestamp, attempts: count, requests: count, failures: count, skipped: count }),
      )
      .meta({
        description:
          'Per minute, oldest first, one entry per minute: attempts, of them the requests sent to targets and ' +
          'the failed requests, and the attempts that sent no request (skipped).',
      }),
    attempts: count.meta({ description: 'Delivery attempts in the window: requests + skipped.' }),
    requests: count.meta({
      description: 'Attempts in the window that sent a request to the target (what receivers can count).',
    }),
    failures: count.meta({ description: 'Requests in the window that failed (no 2xx, or no answer).' }),
    skipped: count.meta({
      description:
        'Attempts in the window that sent no request: `circuit-open` (the breaker was open), `interrupted`, ' +
        '`internal`, `private-address`, `invalid-url`.',
    }),
    skippedByReason: z
      .array(z.object({ reason: z.string(), count }))
      .meta({ description: 'The skipped attempts by error kind, most first.' }),
    successRate: z
      .number()
      .min(0)
      .max(1)
      .nullable()
      .meta({ description: 'Share of the window’s requests that succeeded; null without requests.' }),
    latencyMs: z.object({ p50: milliseconds, p90: milliseconds, p99: milliseconds }).meta({
      description: 'Request duration percentiles in the window (skips left out); null without requests.',
    }),
    dueBacklog: count.meta({
      description:
        'Webhooks due for an attempt and not being delivered (Created or Retrying, due time passed) of active ' +
        'registrations: what the dispatchers should be sending now.',
    }),
    dueHeld: z.object({ paused: count, disabled: count }).meta({
      description:
        'Webhooks that would be due but whose registration is paused or disabled: kept, sent once it is ' +
        'resumed; not in dueBacklog (they do not mean a stalled dispatcher).',
    }),
    inFlight: count.meta({
      description:
        'Webhooks being delivered now: Created or Retrying, leased by a dispatcher whose lease has not run out.',
    }),
    scheduled: count.meta({
      description:
        'Webhooks waiting for a later attempt: Created or Retrying, not leased, next attempt not yet due (a Retrying one backing off).',
    }),
    nextScheduledAt: timestamp.nullable().meta({
      description: 'When the earliest of the scheduled webhooks is due; null when none is scheduled.',
    }),
    oldestDueSeconds: z.number().min(0).nullable().meta({
      description:
        'How long the longest-waiting due webhook (of an active registration) has been due; null when none is.',
    }),
    blockedGroups: count.meta({
      description: 'Groups held by a Failed webhook (as GET /api/webhook-groups?blocked=true lists them).',
    }),
  })
  .meta({ id: 'WebhookStatsRead' });
export type WebhookStatsRead = z.infer<typeof WebhookStatsRead>;

/** The ranges the time series offers, each with its step: at most 240 points (`seriesStep`). */
export const SERIES_STEPS_MINUTES = [1, 5, 15, 60] as const;
/** How far back the per-minute figures reach: the dispatcher's prune keeps them this long (`ATTEMPT_STATS_RETENTION_MS`). */
export const SERIES_MAX_HOURS = 48;
const SERIES_MAX_POINTS = 240;

/** The step of a series over `minutes`: the finest of SERIES_STEPS_MINUTES that keeps it to 240 points. */
export function seriesStep(minutes: number): number {
  return SERIES_STEPS_MINUTES.find((step) => minutes / step <= SERIES_MAX_POINTS) ?? 60;
}

/** GET /api/webhook-stats/series: deliveries over a chosen range, per step, from the per-minute figures. */
export const WebhookStatsSeriesRead = z
  .object({
    from: timestamp.meta({ description: 'Start of the first step (whole minutes).' }),
    to: timestamp.meta({ description: 'End of the last step.' }),
    stepMinutes: z.number().int().meta({ description: 'The length of each step: 1, 5, 15 or 60 minutes.' }),
    registrationId: z
      .number()
      .int()
      .nullable()
      .meta({ description: 'The registration, or null for all visible.' }),
    points: z
      .array(
        z.object({
          at: timestamp.meta({ description: 'Start of the step.' }),
          requests: count.meta({ description: 'Attempts that sent a request to the target.' }),
          successes: count.meta({ description: 'Requests answered with a 2xx.' }),
          targetFailures: count.meta({
            description:
              'Requests that failed on the target’s side: a 5xx, a timeout, a connection or TLS error.',
          }),
          otherFailures: count.meta({
            description:
              'Requests answered but refused: a 4xx or a redirect (requests − successes − targetFailures).',
          }),
          skipped: count.meta({
            description: 'Attempts that sent no request (circuit-open, interrupted, private-address, …).',
          }),
          p50Ms: milliseconds.meta({
            description: 'Median request duration (upper bound of its bucket); null without requests.',
          }),
          p95Ms: milliseconds.meta({
            description: '95th percentile request duration; null without requests.',
          }),
        }),
      )
      .meta({ description: 'One point per step, oldest first, steps without attempts included as zeros.' }),
  })
  .meta({ id: 'WebhookStatsSeriesRead' });
export type WebhookStatsSeriesRead = z.infer<typeof WebhookStatsSeriesRead>;
