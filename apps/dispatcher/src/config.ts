import { hostname } from 'node:os';
import { DEFAULT_RETRY_SCHEDULE, parseDuration, parseRetrySchedule } from '@platform/shared';
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
    /** Rows one claim statement takes at most. */
    DISPATCHER_BATCH_SIZE: z.coerce.number().int().min(1).max(10_000).default(100),
    /** Keep-alive connections per target origin, so one slow target cannot take every slot. */
    DISPATCHER_CONNECTIONS_PER_ORIGIN: z.coerce.number().int().min(1).max(1000).default(32),
    /** Longest sleep without a notification (covers lost NOTIFYs). */
    DISPATCHER_POLL_INTERVAL: parsed('5s', parseDuration),
    /** How long in-flight deliveries may take to finish after SIGTERM. */
    DISPATCHER_SHUTDOWN_TIMEOUT: parsed('20s', parseDuration),
    DATA_DIR: z.string().default('.data'),
    /** Opens sealed target credentials and signing secrets; the API's key (see the API's config). */
    SECRET_ENCRYPTION_KEY: z.string().optional(),
    SECRET_ENCRYPTION_KEY_FILE: z.string().optional(),
    /** Names this replica in leases and logs; unique per process by default. */
    DISPATCHER_ID: z.string().trim().min(1).max(200).default(`${hostname()}-${process.pid}`),
  })
  .transform((config) => ({
    ...config,
    // Private targets are how local development and tests reach their receivers; in production
    // they would let a registration probe the internal network.
    ALLOW_PRIVATE_TARGETS: config.ALLOW_PRIVATE_TARGETS ?? config.NODE_ENV !== 'production',
    // a lease outlives any delivery, so a live dispatcher never loses rows it is still working on
    LEASE_MS: config.WEBHOOK_TIMEOUT * 2 + 30_000,
  }));

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
