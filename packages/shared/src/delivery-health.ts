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
    lastHour: HealthWindow,
    lastDay: HealthWindow,
    dueCount: z
      .number()
      .int()
      .meta({ description: 'Webhooks awaiting delivery: Created, Retrying and Pending.' }),
    oldestDueAt: timestamp.nullable().meta({ description: 'When the oldest awaiting webhook was created.' }),
    inFlight: z.number().int().meta({ description: 'Webhooks a dispatcher holds right now.' }),
    lastSuccessAt: timestamp.nullable(),
    failingSince: timestamp
      .nullable()
      .meta({ description: 'The first failed attempt since the last success; null while healthy.' }),
  })
  .meta({ id: 'WebhookRegistrationHealth' });
export type WebhookRegistrationHealth = z.infer<typeof WebhookRegistrationHealth>;
