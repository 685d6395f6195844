import { resolve } from 'node:path';
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
  JWT_ISSUER: z.string().default('https://platform.example.com'),
  JWT_AUDIENCE: z.string().default('platform-api-gen2'),
  ACCESS_TOKEN_TTL: duration('15m'),
  REFRESH_TOKEN_TTL: duration('720h'),
  /** Largest JSON request body. */
  BODY_LIMIT: byteSize('1mb'),
  /** The built admin SPA served at /admin. */
  ADMIN_DIST_DIR: z
    .string()
    .default(resolve(import.meta.dirname, '../../admin/dist'))
    .transform((dir) => resolve(dir)),
  DB_POOL_MAX: z.coerce.number().int().min(1).max(100).default(10),
});

export type Config = z.output<typeof ConfigSchema>;

/**
 * Parses the environment once. Every bad variable is listed together, so one start-up error
 * fixes them all; nothing else in the API reads `process.env`.
 */
export function loadConfig(env: Record<string, string | undefined> = process.env): Config {
  const result = ConfigSchema.safeParse(env);
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
