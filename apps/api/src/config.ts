import { resolve } from 'node:path';
import { RATE_LIMIT_MAX_WINDOW_MS } from '@platform/db';
import { parseSecretKey } from '@platform/crypto';
import { parseDuration } from '@platform/shared';
import { z } from 'zod';

const duration = (fallback: string) =>
  z
    .string()
    .default(fallback)
    .transform((text, ctx) => {
      try {
        return parseDuration(text);
      } catch (error) {
        ctx.addIssue({ code: 'custom', message: (error as Error).message });
        return z.NEVER;
      }
    });

/** A rate-limit window: the prune job deletes a window's count a day after it starts (EXPIRING_TABLES). */
const WINDOW_TOO_LONG = `at most ${RATE_LIMIT_MAX_WINDOW_MS / 3_600_000}h: the prune job deletes rate-limit counts a day after their window starts`;
const rateLimitWindow = (fallback: string) =>
  duration(fallback).refine((ms) => ms <= RATE_LIMIT_MAX_WINDOW_MS, WINDOW_TOO_LONG);

const byteSize = (fallback: string) =>
  z
    .string()
    .default(fallback)
    .transform((text, ctx) => {
      const match = /^(\d+)\s*(b|kb|mb)?$/i.exec(text.trim());
      if (!match) {
        ctx.addIssue({ code: 'custom', message: `"${text}" is not a size (use 512kb, 1mb, …)` });
        return z.NEVER;
      }
      const unit = { b: 1, kb: 1024, mb: 1024 * 1024 }[(match[2] ?? 'b').toLowerCase() as 'b' | 'kb' | 'mb'];
      return Number(match[1]) * unit;
    });

/** A rate-limit policy written `<limit>/<window>`, such as `5/15m`: at most 5 requests per 15 minutes. */
const rateLimit = (fallback: string) =>
  z
    .string()
    .default(fallback)
    .transform((text, ctx) => {
      const match = /^\s*(\d+)\s*\/\s*(.+)$/.exec(text);
      try {
        if (!match || Number(match[1]) < 1) throw new Error();
        const windowMs = parseDuration(match[2]!);
        if (windowMs < 1000) throw new Error();
        if (windowMs > RATE_LIMIT_MAX_WINDOW_MS) {
          ctx.addIssue({ code: 'custom', message: `"${text}": the window must be ${WINDOW_TOO_LONG}` });
          return z.NEVER;
        }
        return { limit: Number(match[1]), windowMs };
      } catch {
        ctx.addIssue({
          code: 'custom',
          message: `"${text}" is not a rate limit (use <count>/<window>, e.g. 5/15m)`,
        });
        return z.NEVER;
      }
    });

const ConfigSchema = z.object({
  NODE_ENV: z.enum(['development', 'test', 'production']).default('development'),
  DATABASE_URL: z.url({ message: 'must be a postgres:// URL' }),
  API_PORT: z.coerce.number().int().min(0).max(65535).default(3000),
  API_HOST: z.string().default('0.0.0.0'),
  LOG_LEVEL: z.enum(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent']).default('info'),
  DATA_DIR: z.string().default('.data'),
  /** PEM of the RS256 signing key; else read from JWT_PRIVATE_KEY_FILE, else generated into DATA_DIR. */
  JWT_PRIVATE_KEY: z.string().optional(),
  JWT_PRIVATE_KEY_FILE: z.string().optional(),
  /**
   * Base64 of the 32-byte key sealing secrets at rest (MFA secrets, webhook credentials); else read
   * from SECRET_ENCRYPTION_KEY_FILE, else generated into DATA_DIR/keys/secret.key (not in production).
   */
  SECRET_ENCRYPTION_KEY: z
    .string()
    .optional()
    .superRefine((text, ctx) => {
      if (text === undefined || text === '') return;
      try {
        parseSecretKey(text);
      } catch (error) {
        ctx.addIssue({ code: 'custom', message: (error as Error).message });
      }
    }),
  SECRET_ENCRYPTION_KEY_FILE: z.string().optional(),
  JWT_ISSUER: z.string().default('https://platform.example.com'),
  JWT_AUDIENCE: z.string().default('platform-api-gen2'),
  /**
   * Audience of the Gen1 legacy API's tokens (docs/gen1-to-gen2.md#tokens-one-account-two-kinds-of-token): same keys and issuer, another audience,
   * so neither generation accepts the other's tokens. Must differ from JWT_AUDIENCE.
   */
  JWT_GEN1_AUDIENCE: z.string().min(1).default('platform-api-gen1'),
  ACCESS_TOKEN_TTL: duration('15m'),
  REFRESH_TOKEN_TTL: duration('720h'),
  /** Largest JSON request body. */
  BODY_LIMIT: byteSize('1mb'),
  /** Largest file of an upload (`POST /api/files`); the bytes are kept in Postgres. */
  FILE_UPLOAD_LIMIT: byteSize('10mb'),
  /** The built admin SPA served at /admin. */
  ADMIN_DIST_DIR: z
    .string()
    .default(resolve(import.meta.dirname, '../../admin/dist'))
    .transform((dir) => resolve(dir)),
  DB_POOL_MAX: z.coerce.number().int().min(1).max(100).default(10),
  /** Items a bulk operation, recover or replay applies per transaction. */
  WEBHOOK_OPERATION_BATCH: z.coerce.number().int().min(1).max(10_000).default(500),
  /**
   * How long an API process owns a running operation without finishing a batch; after it, another
   * API process (or this one, restarted) resumes the operation.
   */
  WEBHOOK_OPERATION_LEASE: duration('30s'),
  /** How long a password-recovery code (mail) stays valid. */
  RECOVERY_CODE_TTL: duration('30m'),
  /** How long recovery stays blocked after the 5th wrong recovery code (docs/decisions.md#password-recovery). */
  RECOVERY_BLOCK_DURATION: rateLimitWindow('24h'),
  /** Policy DefaultRateLimitAuth of recover-password, per email address asked for. */
  RECOVERY_RATE_LIMIT_PER_EMAIL: rateLimit('5/15m'),
  /** Policy DefaultRateLimitAuth per client address (recover-password; change-password-with-recovery-code apart). */
  RECOVERY_RATE_LIMIT_PER_ADDRESS: rateLimit('20/15m'),
  /**
   * May webhook targets be private, loopback or link-local addresses (or `localhost`)? Default:
   * yes, unless NODE_ENV=production (docs/dispatcher.md#private-targets); see ConfigWithDefaults.
   */
  ALLOW_PRIVATE_TARGETS: z
    .string()
    .trim()
    .toLowerCase()
    .pipe(z.enum(['true', 'false', '1', '0'], { message: 'must be true or false' }))
    .transform((v) => v === 'true' || v === '1')
    .optional(),
  /**
   * Limit of one delivery request: the dispatcher's setting, which the API's test events
   * (`POST /api/webhook-registrations/{id}/test`) obey too; set both processes alike.
   */
  WEBHOOK_TIMEOUT: duration('15s'),
  /**
   * Longest a webhook search (`GET /api/webhooks?q=`) may run: a string in most payloads counts
   * every match (docs/performance.md › Search); past this it is refused, naming the fix.
   */
  WEBHOOK_SEARCH_TIMEOUT: duration('5s'),
});

/**
 * The token audiences of both generations are distinct (each generation's access audience and its
 * `/refresh` and `/mfa` ones), or a token of one would pass as a token of the other.
 */
function distinctAudiences(config: z.output<typeof ConfigSchema>, ctx: z.RefinementCtx): void {
  const gen2 = config.JWT_AUDIENCE;
  const gen1 = config.JWT_GEN1_AUDIENCE;
  const kinds = ['', '/refresh', '/mfa'];
  const clash = kinds.some((a) => kinds.some((b) => `${gen1}${a}` === `${gen2}${b}`));
  if (clash) {
    ctx.addIssue({
      code: 'custom',
      path: ['JWT_GEN1_AUDIENCE'],
      message: `must differ from JWT_AUDIENCE ("${gen2}") and its /refresh and /mfa audiences`,
    });
  }
}

/** Defaults that depend on other variables. */
const ConfigWithDefaults = ConfigSchema.superRefine(distinctAudiences).transform((config) => ({
  ...config,
  ALLOW_PRIVATE_TARGETS: config.ALLOW_PRIVATE_TARGETS ?? config.NODE_ENV !== 'production',
}));

export type Config = z.output<typeof ConfigWithDefaults>;

/**
 * Parses the environment once. Every bad variable is listed together, so one start-up error
 * fixes them all; nothing else in the API reads `process.env`.
 */
export function loadConfig(env: Record<string, string | undefined> = process.env): Config {
  const result = ConfigWithDefaults.safeParse(env);
  if (result.success) return result.data;
  const lines = result.error.issues.map((issue) => `  ${issue.path.join('.')}: ${issue.message}`);
  throw new Error(`Invalid configuration:\n${lines.join('\n')}`);
}

/** A configuration for tests: every default, plus what the test passes. */
export function testConfig(
  overrides: Partial<Record<keyof Config, string>> & { DATABASE_URL: string },
): Config {
  return loadConfig({ NODE_ENV: 'test', LOG_LEVEL: 'silent', ...overrides });
}
