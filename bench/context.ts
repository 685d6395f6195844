import type { SecretBox } from '@platform/crypto';
import type { BenchCluster } from './database';
import type { Target } from './processes';
import type { StackEnv } from './stack';

/** What every mode of the bench works with. */
export interface BenchContext {
  cluster: BenchCluster;
  /** The webhook target process, shared by the modes (each resets it). */
  target: Target;
  /** Seals signing secrets with the key the dispatcher and the API are given. */
  secrets: SecretBox;
  /** The Standard Webhooks secret of the seeded registrations. */
  signingSecret: string;
  /** Deliveries in flight: DISPATCHER_CONCURRENCY, and the raw client's parallelism. */
  concurrency: number;
  /** Longest wait for one drain. */
  timeoutMs: number;
  /** Environment of the API and dispatcher processes on `databaseUrl`. */
  stack(databaseUrl: string): StackEnv;
  /** Progress, to stderr (stdout carries only the JSON results). */
  log(message: string): void;
}
