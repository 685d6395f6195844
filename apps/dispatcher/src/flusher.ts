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
/**
 * Results waiting that start a flush without waiting out the linger: a statement's worth, and
 * what a flush carries in a drain (the queue mode of `pnpm bench` records its results so).
 */
export const LINGER_BATCH = 128;

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
  /**
   * How long a result nothing waits for may wait for others to share its statement (0: none).
   * A result of a grouped webhook (the flush leases the group's next one) or one that holds its
   * endpoint is written at once, and with it everything waiting.
   */
  lingerMs: number;
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
 * while the previous flush ran goes in the next one. A result that nothing waits for (ungrouped,
 * holding nothing) waits up to `lingerMs` for others to share its statement and commit, as a
 * queue at rest would otherwise pay one completion per delivery; its slot is free meanwhile and
 * its row stays leased to us. A batch that fails to write is tried again with back-off; its rows
 * stay leased to us meanwhile, and if the database stays away the lease runs out and they are
 * delivered again (docs/dispatcher.md › Writing results).
 */
export class ResultFlusher {
  private readonly results: AttemptResult[] = [];
  private flushing: Promise<void> | undefined;
  /** When the oldest waiting result must be written by (epoch ms), or Infinity. */
  private writeBy = Infinity;
  /** Whether a waiting result must be written without lingering. */
  private urgent = false;
  private lingerTimer: unknown;

  constructor(
    private readonly options: FlusherOptions,
    private readonly onWritten: (report: FlushReport) => void,
  ) {}

  /** Queues `result` for a flush: at once if anything waits on it, else within the linger. */
  add(result: AttemptResult): void {
    if (this.results.length === 0) this.writeBy = this.options.clock.now() + this.options.lingerMs;
    this.results.push(result);
    if (result.groupKey !== null || result.holdMs !== null) this.urgent = true;
    this.schedule();
  }

  /** Writes everything waiting now, linger or not; answers when it is written (or given up on). */
  async flush(): Promise<void> {
    // a flush under way may have checked for results before the last ones came: wait for it,
    // then write what is left
    while (this.flushing || this.results.length > 0) {
      this.urgent = true;
      await (this.flushing ?? this.start());
    }
  }

  /** Starts a flush if one is due and none runs, else sets the timer for the oldest result's. */
  private schedule(): void {
    if (this.flushing || this.results.length === 0) return;
    if (this.due()) {
      void this.start();
      return;
    }
    this.lingerTimer ??= this.options.clock.setTimeout(() => {
      this.lingerTimer = undefined;
      this.schedule();
    }, this.writeBy - this.options.clock.now());
  }

  /** Whether what waits must be written now: something waits on it, a statement's worth, or the linger is out. */
  private due(): boolean {
    return this.urgent || this.results.length >= LINGER_BATCH || this.options.clock.now() >= this.writeBy;
  }

  private start(): Promise<void> {
    if (this.lingerTimer !== undefined) {
      this.options.clock.clearTimeout(this.lingerTimer);
      this.lingerTimer = undefined;
    }
    this.flushing ??= new Promise<void>((resolve) => setImmediate(resolve))
      .then(() => this.writeAll())
      .finally(() => {
        this.flushing = undefined;
        this.schedule();
      });
    return this.flushing;
  }

  private async writeAll(): Promise<void> {
    const { knex, logger, dispatcherId, leaseMs, policy, clock } = this.options;
    while (this.results.length > 0 && this.due()) {
      const batch = this.results.splice(0, FLUSH_BATCH);
      // what comes from here on lingers afresh
      if (this.results.length === 0) {
        this.urgent = false;
        this.writeBy = Infinity;
      }
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
