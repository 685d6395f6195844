import type { Knex, SecretBox } from '@platform/db';
import type { Logger } from 'pino';
import type { Config } from './config';
import type { TokenService } from './auth/tokens';

/** Everything a request handler may use; built by main.ts (or a test) and passed to createApp. */
export interface AppDeps {
  config: Config;
  knex: Knex;
  logger: Logger;
  tokens: TokenService;
  /** Seals secrets kept at rest (MFA secrets, webhook credentials). */
  secrets: SecretBox;
  /** The current time; tests pass a controllable clock. */
  now: () => Date;
}
