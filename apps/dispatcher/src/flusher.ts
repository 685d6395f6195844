import {
  completeWebhooks,
  type AttemptResult,
  type ClaimedWebhook,
  type CompletedBatch,
  type HealthPolicy,
  type Knex,
} from '@platform/db';
import type { Logger } from 'pino';
import type { Clock } from './clock';

/** Results written at most per statement. */
const FLUSH_BATCH = 500;
/** Tries to write one batch before leaving its rows to their lease. */
const FLUSH_TRIES = 8;

export interface FlusherOptions {
  knex: Knex;
  logger: Logger;
  dispatcherId: string;
  /**
   * How long a claim holds its rows, longer than a delivery can take; a released group's next
   * webhook is leased as long.
   */
  leaseMs: number;
  /** When breakers open and registrations are disabled. */
  policy: HealthPolicy;
  clock: Clock;
  /** Called with the registrations a flush disabled, for metrics. */
  onDisabled?(disabled: CompletedBatch['disabled']): void;
}

/** What one written batch tells the loop. */
export interface FlushReport {
  /** The next webhooks of the groups the batch released, already leased to this dispatcher. */
  leased: ClaimedWebhook[];
  /** When the statement that leased them was sent (epoch ms). */
  leasedAt: number;
  /**
   * When the earliest retry the batch scheduled falls due (epoch ms), or Infinity. It sends no
   * NOTIFY, and the loop's timer was set while its row was still leased, so the loop moves it.
   * Nothing else written becomes due: a released group's next webhook came back leased, a
   * blocked group waits.
   */
  nextRetryAt: number;
  /** Endpoints the batch held (a `Retry-After`): their holds are in the database now. */
  held: number[];
}

/**
 * Writes attempt results in batches (`webhooks_complete`), one flush at a time: whatever finished
 * while the previous flush ran goes in the next one, so under load a flush carries many results
 * and at rest one. A batch that fails to write is tried again with back-off; its rows stay leased
 * to us meanwhile, and if the database stays away the lease runs out and they are delivered again.
 */
export class ResultFlusher {
  private readonly results: AttemptResult[] = [];
  private flushing: Promise<void> | undefined;

  constructor(
    private readonly options: FlusherOptions,
    private readonly onWritten: (report: FlushReport) => void,
  ) {}

  /** Queues `result` for the next flush, and starts one unless one runs. */
  add(result: AttemptResult): void {
    this.results.push(result);
    this.flush();
  }

  /** Starts a flush unless one runs; answers when the running one is done. */
  flush(): Promise<void> {
    this.flushing ??= new Promise<void>((resolve) => setImmediate(resolve))
      .then(() => this.writeAll())
      .finally(() => {
        this.flushing = undefined;
        if (this.results.length > 0) void this.flush();
      });
    return this.flushing;
  }

  private async writeAll(): Promise<void> {
    const { knex, logger, dispatcherId, leaseMs, policy, clock } = this.options;
    while (this.results.length > 0) {
      const batch = this.results.splice(0, FLUSH_BATCH);
      for (let attempt = 1; ; attempt++) {
        const leasedAt = clock.now();
        try {
          const { applied, leased, disabled } = await completeWebhooks(
            knex,
            { dispatcherId, leaseMs, policy },
            batch,
          );
          if (disabled.length > 0) {
            logger.warn({ disabled }, 'registrations disabled; their parties were mailed');
            this.options.onDisabled?.(disabled);
          }
          if (applied.length < batch.length) {
            logger.warn(
              { lost: batch.length - applied.length },
              'results dropped: their lease had passed to another dispatcher',
            );
          }
          const delays = batch.flatMap((result) => result.retryDelayMs ?? []);
          const held = batch.flatMap((result) => (result.holdMs === null ? [] : [result.targetId]));
          this.onWritten({ leased, leasedAt, nextRetryAt: clock.now() + Math.min(...delays), held });
          break;
        } catch (error) {
          // the rows stay leased to us; when the database is back they complete, or the lease
          // runs out and they are delivered again
          logger.error({ err: error, attempt }, 'writing results failed');
          if (attempt >= FLUSH_TRIES) break;
          await new Promise<void>((resolve) => clock.setTimeout(resolve, 100 * 2 ** attempt));
        }
      }
    }
  }
}
