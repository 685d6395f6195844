import { hostname } from 'node:os';
import { DEFAULT_RETRY_SCHEDULE, parseDuration, parseRetrySchedule } from '@platform/shared';
import { validateCronExpression } from 'cron';
import { z } from 'zod';

/** A string setting turned into something else by `parse`, whose error message becomes the issue. */
const parsed = <T>(fallback: string, parse: (text: string) => T) =>
  z
    .string()
    .default(fallback)
    .transform((text, ctx) => {
      try {
        return parse(text);
      } catch (error) {
        ctx.addIssue({ code: 'custom', message: (error as Error).message });
        return z.NEVER;
      }
    });

/** A retention period (or any long span): a duration as `parseDuration` reads it, or whole days (`30d`). */
function parseRetention(text: string): number {
  const days = /^\s*(\d+)\s*d\s*$/.exec(text);
  const ms = days ? Number(days[1]) * 86_400_000 : parseDuration(text);
  if (ms <= 0) throw new Error('a retention period must be longer than zero');
  return ms;
}

/** A cron expression as the `cron` package reads it: five fields, or six with seconds first. */
const cronSchedule = (fallback: string) =>
  parsed(fallback, (text) => {
    const check = validateCronExpression(text);
    if (!check.valid) throw new Error(`"${text}" is not a cron expression (${check.error?.message})`);
    return text;
  });

const ConfigSchema = z
  .object({
    NODE_ENV: z.enum(['development', 'test', 'production']).default('development'),
    DATABASE_URL: z.url({ message: 'must be a postgres:// URL' }),
    DISPATCHER_PORT: z.coerce.number().int().min(0).max(65535).default(3001),
    LOG_LEVEL: z.enum(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent']).default('info'),
    /** Waits before each attempt, in milliseconds; its length is the number of attempts. */
    WEBHOOK_RETRY_SCHEDULE: parsed(DEFAULT_RETRY_SCHEDULE, parseRetrySchedule),
    /** Limit of one delivery request, in milliseconds. */
    WEBHOOK_TIMEOUT: parsed('15s', parseDuration),
    // z.coerce.boolean() would read "false" as true, so the accepted spellings are explicit.
    ALLOW_PRIVATE_TARGETS: z
      .enum(['true', 'false', '1', '0'], { message: 'must be true or false' })
      .optional()
      .transform((text) => (text === undefined ? undefined : text === 'true' || text === '1')),
    /** Deliveries in flight at once, over all targets. */
    DISPATCHER_CONCURRENCY: z.coerce.number().int().min(1).max(10_000).default(32),
    /**
     * Deliveries in flight to one endpoint at most. The adaptive limit of each endpoint
     * (docs/dispatcher.md › Scheduling) grows up to this; unset, DISPATCHER_CONCURRENCY.
     */
    DISPATCHER_MAX_PER_ENDPOINT: z.coerce.number().int().min(1).max(10_000).optional(),
    /** The former name of DISPATCHER_MAX_PER_ENDPOINT, still read. */
    DISPATCHER_MAX_PER_TARGET: z.coerce.number().int().min(1).max(10_000).optional(),
    /**
     * Deliveries in flight to one origin (scheme, host, port) at most, over all its endpoints,
     * shared evenly among those with work; unset, 4 × the per-endpoint cap.
     */
    DISPATCHER_MAX_PER_HOST: z.coerce.number().int().min(1).max(100_000).optional(),
    /** Consecutive target failures (timeouts, connection errors, 5xx) that open an endpoint's breaker. */
    DISPATCHER_BREAKER_FAILURES: z.coerce.number().int().min(1).max(10_000).default(5),
    /** An open breaker's first cool-down; it doubles with each open since the last success. */
    DISPATCHER_BREAKER_COOLDOWN: parsed('30s', parseDuration),
    /** The longest cool-down of an open breaker. */
    DISPATCHER_BREAKER_MAX_COOLDOWN: parsed('10m', parseDuration),
    /**
     * A registration whose every attempt failed for this long (with at least
     * WEBHOOK_DISABLE_MIN_ATTEMPTS attempts) is disabled; its webhooks are kept. `5d` or a duration.
     */
    WEBHOOK_DISABLE_AFTER: parsed('5d', parseRetention),
    WEBHOOK_DISABLE_MIN_ATTEMPTS: z.coerce.number().int().min(1).max(1_000_000).default(10),
    /** Rows one claim statement takes at most. */
    DISPATCHER_BATCH_SIZE: z.coerce.number().int().min(1).max(10_000).default(100),
    /**
     * Keep-alive connections per origin; unset, the per-host cap within DISPATCHER_CONCURRENCY
     * (fewer would queue one endpoint's requests behind another's of the same host).
     */
    DISPATCHER_CONNECTIONS_PER_ORIGIN: z.coerce.number().int().min(1).max(1000).optional(),
    /**
     * How long a delivery's result may wait to share its write with others (docs/dispatcher.md ›
     * Writing results); a grouped webhook's result, or one that holds its endpoint, never waits.
     * 0 writes each at once.
     */
    DISPATCHER_FLUSH_LINGER: parsed('20ms', parseDuration),
    /** Longest sleep without a notification (covers lost NOTIFYs). */
    DISPATCHER_POLL_INTERVAL: parsed('5s', parseDuration),
    /** How long in-flight deliveries may take to finish after SIGTERM. */
    DISPATCHER_SHUTDOWN_TIMEOUT: parsed('20s', parseDuration),
    /**
     * How long a claim holds its webhooks; unset, 2 × WEBHOOK_TIMEOUT + 30 s. Must exceed
     * WEBHOOK_TIMEOUT. Tests shorten it so a killed dispatcher's webhooks come back quickly.
     */
    DISPATCHER_LEASE: z
      .string()
      .optional()
      .transform((text, ctx) => {
        if (text === undefined) return undefined;
        try {
          return parseDuration(text);
        } catch (error) {
          ctx.addIssue({ code: 'custom', message: (error as Error).message });
          return z.NEVER;
        }
      }),
    /** Finished webhooks (Successful, Aborted, Resolved) are deleted this long after completion. */
    WEBHOOK_RETENTION: parsed('30d', parseRetention),
    /** Webhook attempts are deleted this long after they were recorded. */
    WEBHOOK_ATTEMPT_RETENTION: parsed('30d', parseRetention),
    /** When the prune job runs (cron); one replica at a time. Default: hourly. */
    DISPATCHER_PRUNE_SCHEDULE: cronSchedule('0 * * * *'),
    /** When the group repair sweep runs (cron); one replica at a time. Default: every minute. */
    DISPATCHER_REPAIR_SCHEDULE: cronSchedule('* * * * *'),
    /**
     * How often each replica tells breakers open too long and sends the due operator webhooks
     * (docs/dispatcher.md#operator-notifications).
     */
    DISPATCHER_NOTIFY_INTERVAL: parsed('10s', parseDuration),
    DATA_DIR: z.string().default('.data'),
    /** Opens sealed target credentials and signing secrets; the API's key (see the API's config). */
    SECRET_ENCRYPTION_KEY: z.string().optional(),
    SECRET_ENCRYPTION_KEY_FILE: z.string().optional(),
    /**
     * The API's RS256 signing key (PEM), which signs the bearer tokens of authorization types 2
     * and 3; else read from JWT_PRIVATE_KEY_FILE, else DATA_DIR/keys/jwt-private.pem (generated
     * outside production, exactly as the API resolves it).
     */
    JWT_PRIVATE_KEY: z.string().optional(),
    JWT_PRIVATE_KEY_FILE: z.string().optional(),
    /** Issuer and audience of those tokens: the API's values, which it checks (same defaults). */
    JWT_ISSUER: z.string().default('https://platform.example.com'),
    JWT_AUDIENCE: z.string().default('platform-api-gen2'),
    /** Names this replica in leases and logs; unique per process by default. */
    DISPATCHER_ID: z.string().trim().min(1).max(200).default(`${hostname()}-${process.pid}`),
  })
  .transform((config, ctx) => {
    // a lease shorter than a delivery hands a webhook to a second dispatcher while the first
    // still delivers it
    if (config.DISPATCHER_LEASE !== undefined && config.DISPATCHER_LEASE <= config.WEBHOOK_TIMEOUT) {
      ctx.addIssue({
        code: 'custom',
        path: ['DISPATCHER_LEASE'],
        message: 'must be longer than WEBHOOK_TIMEOUT',
      });
      return z.NEVER;
    }
    if (
      config.DISPATCHER_MAX_PER_ENDPOINT !== undefined &&
      config.DISPATCHER_MAX_PER_TARGET !== undefined &&
      config.DISPATCHER_MAX_PER_ENDPOINT !== config.DISPATCHER_MAX_PER_TARGET
    ) {
      ctx.addIssue({
        code: 'custom',
        path: ['DISPATCHER_MAX_PER_TARGET'],
        message: 'is the former name of DISPATCHER_MAX_PER_ENDPOINT: set one of them',
      });
      return z.NEVER;
    }
    const maxPerEndpoint = Math.min(
      config.DISPATCHER_MAX_PER_ENDPOINT ?? config.DISPATCHER_MAX_PER_TARGET ?? config.DISPATCHER_CONCURRENCY,
      config.DISPATCHER_CONCURRENCY,
    );
    const maxPerHost = config.DISPATCHER_MAX_PER_HOST ?? 4 * maxPerEndpoint;
    return {
      ...config,
      // Private targets are how local development and tests reach their receivers; in production
      // they would let a registration probe the internal network.
      ALLOW_PRIVATE_TARGETS: config.ALLOW_PRIVATE_TARGETS ?? config.NODE_ENV !== 'production',
      // a lease outlives any delivery, so a live dispatcher never loses rows it is still working on
      LEASE_MS: config.DISPATCHER_LEASE ?? config.WEBHOOK_TIMEOUT * 2 + 30_000,
      MAX_PER_ENDPOINT: maxPerEndpoint,
      MAX_PER_HOST: maxPerHost,
      CONNECTIONS_PER_ORIGIN:
        config.DISPATCHER_CONNECTIONS_PER_ORIGIN ?? Math.min(maxPerHost, config.DISPATCHER_CONCURRENCY),
    };
  });

export type Config = z.output<typeof ConfigSchema>;

/**
 * Parses the environment once. Every bad variable is listed together, so one start-up error
 * fixes them all; nothing else in the dispatcher reads `process.env`.
 */
export function loadConfig(env: Record<string, string | undefined> = process.env): Config {
  const result = ConfigSchema.safeParse(env);
  if (result.success) return result.data;
  const lines = result.error.issues.map((issue) => `  ${issue.path.join('.')}: ${issue.message}`);
  throw new Error(`Invalid configuration:\n${lines.join('\n')}`);
}
