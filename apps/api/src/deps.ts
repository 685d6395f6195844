import type { Knex } from '@platform/db';
import type { SecretBox } from '@platform/crypto';
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
  /** Runs bulk actions, recovers and replays in batches (and resumes ones left by a dead process). */
  operations: Operations;
}

/**
 * What handlers and tests use of this process's operation runner (`OperationRunner` in
 * features/webhook-operations, the one implementation; `createOperation` there creates one).
 */
export interface Operations {
  /** This runner's id: an operation created here is leased to it. */
  readonly id: string;
  /** How long a runner owns an operation without finishing a batch before another may take it over. */
  readonly leaseMs: number;
  /** Runs an operation this runner holds (just created) in the background. */
  kick(id: number): void;
  /** Takes over the running operations whose lease ran out, and runs them. */
  resumeOrphans(): Promise<void>;
  /** Resolves when this runner has no operation in hand. */
  idle(): Promise<void>;
  /** Stops taking batches; waits for the ones in flight. Unfinished operations resume elsewhere. */
  stop(): Promise<void>;
  /** The most batches that ran at once (for tests). */
  readonly maxInFlight: number;
}
