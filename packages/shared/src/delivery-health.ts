import { z } from 'zod';
import { BREAKER_STATES } from './breaker-states';

const timestamp = z.iso.datetime({ offset: true });

/**
 * What one recorded attempt says about its target and its registration; the one rule the
 * dispatcher's concurrency limit, the circuit breaker (`webhooks_complete`) and a registration's
 * health read:
 * - `success`: a 2xx.
 * - `target-failure`: the target is down or overloaded: a timeout, a connection error, DNS, TLS,
 *   or a 5xx. Shrinks the target's concurrency limit and counts towards opening its breaker.
 * - `failure`: the attempt failed, but the target answered or was never asked: a 4xx, a
 *   redirect, `circuit-open`, `private-address`, `invalid-url`. Counts against the registration
 *   (it is failing) but not against the target's health.
 * - `neutral`: not the target's doing: `interrupted` (the dispatcher stopped) and `internal`.
 */
export type AttemptOutcome = 'success' | 'target-failure' | 'failure' | 'neutral';

const TARGET_FAILURE_KINDS: ReadonlySet<string> = new Set([
  'timeout',
  'connection-refused',
  'connection-reset',
  'connection',
  'dns',
  'tls',
]);
const NEUTRAL_KINDS: ReadonlySet<string> = new Set(['interrupted', 'internal']);

export function attemptOutcome(errorKind: string | null, statusCode: number | null): AttemptOutcome {
  if (errorKind === null) return 'success';
  if (NEUTRAL_KINDS.has(errorKind)) return 'neutral';
  if (TARGET_FAILURE_KINDS.has(errorKind)) return 'target-failure';
  if (errorKind === 'status' && statusCode !== null && statusCode >= 500) return 'target-failure';
  return 'failure';
}

/**
 * The attempts that sent no request to the target (a *skip*): `circuit-open` (the endpoint's
 * breaker is open), `interrupted` (the try a previous lease counted never reported; it is recorded
 * instead of being sent again), `internal` (the dispatcher could not build the request),
 * `private-address` and `invalid-url` (refused before connecting). They count as attempts (the
 * retry schedule keeps its meaning) but never as requests: every figure of requests, failures of
 * requests and latency leaves them out, and reports them apart as skipped. The same rule as the
 * latency bucket -1 of `webhook_attempt_stats` (`webhooks_complete`).
 */
export const ATTEMPT_KINDS_WITHOUT_REQUEST = [
  'circuit-open',
  'interrupted',
  'internal',
  'private-address',
  'invalid-url',
] as const;
export type AttemptSkipReason = (typeof ATTEMPT_KINDS_WITHOUT_REQUEST)[number];

/** Why an attempt sent nothing, in words, per skip kind: the attempt read's `skipReason`. */
export const ATTEMPT_SKIP_EXPLANATIONS: Readonly<Record<AttemptSkipReason, string>> = {
  'circuit-open':
    'The endpoint’s circuit breaker was open after repeated failures: nothing was sent. The attempt counts, so the retry schedule keeps its length.',
  interrupted:
    'The dispatcher holding this try stopped before it reported: it is recorded as failed rather than sent again.',
  internal:
    'The dispatcher could not build the request (a secret or credential it could not open, or no bearer token): nothing was sent.',
  'private-address':
    'The target resolves to a private address, which deliveries may not reach: nothing was sent.',
  'invalid-url': 'The target URL could not be parsed: nothing was sent.',
};

/** Why an attempt with this error kind sent nothing, or null when it sent a request. */
export function attemptSkipReason(errorKind: string | null): string | null {
  return attemptSentRequest(errorKind) ? null : ATTEMPT_SKIP_EXPLANATIONS[errorKind as AttemptSkipReason];
}

/** Whether an attempt with this error kind sent a request to the target (a 2xx's kind is null). */
export function attemptSentRequest(errorKind: string | null): boolean {
  return errorKind === null || !(ATTEMPT_KINDS_WITHOUT_REQUEST as readonly string[]).includes(errorKind);
}

/** How `webhooks_complete` receives an outcome (a smallint per result). */
export const ATTEMPT_OUTCOME_CODES: Readonly<Record<AttemptOutcome, number>> = {
  neutral: 0,
  success: 1,
  'target-failure': 2,
  failure: 3,
};

/** A registration's delivery status: `paused` by an operator, `disabled` by the dispatcher. */
export const WEBHOOK_REGISTRATION_STATUSES = ['active', 'paused', 'disabled'] as const;
export type WebhookRegistrationStatus = (typeof WEBHOOK_REGISTRATION_STATUSES)[number];

/** Why the dispatcher disabled a registration: its target answered 410 Gone, or it kept failing. */
export const WEBHOOK_DISABLED_REASONS = ['gone', 'failing'] as const;
export type WebhookDisabledReason = (typeof WEBHOOK_DISABLED_REASONS)[number];

/** How many of the registrations sharing an endpoint the health read names (all are counted). */
export const SHARED_WITH_SHOWN = 20;

const HealthWindow = z.object({
  attempts: z.number().int().meta({ description: 'Attempts recorded in the window: requests + skipped.' }),
  requests: z
    .number()
    .int()
    .meta({ description: 'Attempts that sent a request to the target (what the receiver can count).' }),
  skipped: z.number().int().meta({
    description:
      'Attempts that sent no request (`circuit-open`, `interrupted`, `internal`, `private-address`, `invalid-url`).',
  }),
  successes: z.number().int(),
  successRate: z.number().nullable().meta({ description: 'successes / requests; null without requests.' }),
  p50Ms: z
    .number()
    .nullable()
    .meta({ description: 'Median duration of the requests sent (to within 10 %); null without one.' }),
  p95Ms: z.number().nullable(),
});

/** `GET /api/webhook-registrations/{id}/health`. */
export const WebhookRegistrationHealth = z
  .object({
    registrationId: z.number().int(),
    status: z.enum(WEBHOOK_REGISTRATION_STATUSES),
    disabledReason: z.enum(WEBHOOK_DISABLED_REASONS).nullable(),
    statusChanged: timestamp.nullable(),
    endpoint: z
      .object({
        id: z.number().int(),
        url: z
          .string()
          .meta({ description: 'The normalised URL: lower-case scheme and host, no default port.' }),
        origin: z.string().meta({ description: 'Scheme, host and port: what the per-host cap counts.' }),
        partyId: z.number().int().meta({ description: 'The party whose endpoint it is.' }),
        lastSuccessAt: timestamp.nullable().meta({
          description:
            'The last delivery to the endpoint that succeeded, any registration’s (to within 10 s).',
        }),
        lastFailureAt: timestamp.nullable().meta({
          description:
            'The last target failure at the endpoint (a timeout, a connection error, a 5xx), any registration’s.',
        }),
        sharedWith: z
          .array(z.object({ id: z.number().int(), status: z.enum(WEBHOOK_REGISTRATION_STATUSES) }))
          .meta({
            description:
              'The party’s other registrations delivering to this endpoint (same normalised URL), by id: ' +
              `they share its breaker, its hold and its fair share. At most ${SHARED_WITH_SHOWN}; \`sharedWithCount\` counts all.`,
          }),
        sharedWithCount: z.number().int(),
      })
      .meta({
        description:
          'The endpoint the registration delivers to, the unit of isolation: the breaker, the adaptive ' +
          'concurrency limit and the fair share belong to it. Registrations of one party with one URL share it.',
      }),
    target: z.string().meta({
      description: 'The origin of the endpoint (`endpoint.origin`), kept for older clients.',
      deprecated: true,
    }),
    breaker: z.object({
      state: z.enum(BREAKER_STATES),
      openUntil: timestamp.nullable().meta({ description: 'While open: when a trial request may be sent.' }),
      consecutiveFailures: z.number().int(),
    }),
    holdUntil: timestamp.nullable().meta({
      description:
        'While the endpoint answered 429 or 503 with Retry-After: until when none of its webhooks is sent. Null when not held.',
    }),
    rateLimit: z
      .number()
      .int()
      .nullable()
      .meta({
        description:
          'The rate limit in force at the endpoint (deliveries per second across every dispatcher): the lowest `rateLimit` ' +
          'of the registrations sharing it. Null: unlimited.',
      }),
    lastHour: HealthWindow,
    lastDay: HealthWindow,
    dueCount: z
      .number()
      .int()
      .meta({
        description:
          'Webhooks awaiting delivery: Created, Retrying and Pending, counted up to 10,000 ' +
          '(`dueCountCapped` says when more are waiting), so the read costs the same at any backlog.',
      }),
    dueCountCapped: z.boolean().meta({
      description: 'More than `dueCount` webhooks are awaiting delivery: the count stopped at its cap.',
    }),
    oldestDueAt: timestamp.nullable().meta({ description: 'When the oldest awaiting webhook was created.' }),
    inFlight: z.number().int().meta({ description: 'Webhooks a dispatcher holds right now.' }),
    lastSuccessAt: timestamp.nullable(),
    failingSince: timestamp
      .nullable()
      .meta({ description: 'The first failed attempt since the last success; null while healthy.' }),
  })
  .meta({ id: 'WebhookRegistrationHealth' });
export type WebhookRegistrationHealth = z.infer<typeof WebhookRegistrationHealth>;
