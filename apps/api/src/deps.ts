import type { Knex, SecretBox } from '@platform/db';
import type { Logger } from 'pino';
import type { Config } from './config';
import type { TokenService } from './auth/tokens';
import type { OperationRunner } from './features/webhook-operations/operation-runner';

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
  /** Runs bulk actions, recovers and replays in batches (and resumes ones left by a dead process). */
  operations: OperationRunner;
}
