import {
  claimWebhooks,
  completeWebhooks,
  nextDueAt,
  type AttemptResult,
  type ClaimedWebhook,
  type Knex,
} from '@platform/db';
import type { Logger } from 'pino';
import type { DeliveryOutcome, DeliveryRequest } from './deliver';
import { nextAttemptDelay, parseRetryAfter } from './retry';

export interface DispatcherOptions {
  knex: Knex;
  logger: Logger;
  dispatcherId: string;
  /** Waits before each attempt (ms); its length is the number of attempts. */
  schedule: readonly number[];
  /** Deliveries in flight at most. */
  concurrency: number;
  /** Rows one claim takes at most. */
  batchSize: number;
  /** How long a claim holds its rows; longer than a delivery can take. */
  leaseMs: number;
  /** Longest sleep without a notification: covers lost NOTIFYs and retries falling due. */
  pollMs: number;
  buildRequest(webhook: ClaimedWebhook): Promise<DeliveryRequest>;
  deliver(request: DeliveryRequest): Promise<DeliveryOutcome>;
  now?: () => Date;
  /** Called once per recorded attempt, for metrics. */
  onResult?(result: AttemptResult): void;
}

/**
 * The claim → deliver → complete loop (design part 3). Claims due webhooks in batches sized to
 * the free delivery slots and keeps claiming while batches come back full; otherwise sleeps until
 * a NOTIFY (`wake`), the earliest future `next_attempt_at`, or the fallback poll. Results are
 * written in batches by one flusher: whatever finished while the previous flush ran goes in the
 * next one, so under load a flush carries many results and at rest one.
 */
export class Dispatcher {
  private running = false;
  private loop: Promise<void> | undefined;
  private inFlight = 0;
  private woken = false;
  private wakeSleeper: (() => void) | undefined;
  private readonly results: AttemptResult[] = [];
  private flushing: Promise<void> | undefined;
  private readonly drained = new Set<() => void>();
  private readonly now: () => Date;
  private lastTurn = 0;

  constructor(private readonly options: DispatcherOptions) {
    this.now = options.now ?? (() => new Date());
  }

  /** Deliveries currently in flight. */
  get active(): number {
    return this.inFlight;
  }

  /** Whether the loop was started and not stopped. */
  get isRunning(): boolean {
    return this.running;
  }

  /**
   * When the loop last began a turn (epoch ms; 0 before start). A live loop turns at least once
   * per poll interval plus a claim, so an old value means it hangs (on the database, say) or died.
   */
  get lastTurnAt(): number {
    return this.lastTurn;
  }

  start(): void {
    if (this.running) return;
    this.running = true;
    this.loop = this.run();
  }

  /** A hint that work may be due (a NOTIFY, a reconnected LISTEN); never lost while claiming. */
  wake(): void {
    this.woken = true;
    this.wakeSleeper?.();
  }

  /**
   * Stops claiming, lets in-flight deliveries finish (until `deadlineMs`), and writes their
   * results. Whatever is still in flight at the deadline keeps its lease and is delivered again
   * after it runs out: at-least-once, never lost.
   */
  async stop(deadlineMs: number): Promise<void> {
    this.running = false;
    this.wake();
    await this.loop;
    if (this.inFlight > 0) {
      await new Promise<void>((resolve) => {
        const timer = setTimeout(resolve, deadlineMs);
        this.drained.add(() => {
          clearTimeout(timer);
          resolve();
        });
      });
    }
    this.scheduleFlush();
    await this.flushing;
  }

  private async run(): Promise<void> {
    const { knex, logger, batchSize, concurrency, leaseMs, dispatcherId, pollMs } = this.options;
    let failures = 0;
    while (this.running) {
      this.lastTurn = Date.now();
      this.woken = false;
      const free = concurrency - this.inFlight;
      if (free <= 0) {
        await this.sleep(pollMs); // a finishing delivery wakes us
        continue;
      }
      const wanted = Math.min(free, batchSize);
      let claimed: ClaimedWebhook[];
      try {
        claimed = await claimWebhooks(knex, { batch: wanted, leaseMs, dispatcherId });
        failures = 0;
      } catch (error) {
        failures++;
        logger.error({ err: error }, 'claim failed; retrying');
        await this.sleep(Math.min(pollMs, 100 * 2 ** Math.min(failures, 6)));
        continue;
      }
      for (const webhook of claimed) if (!webhook.registration_deleted) this.launch(webhook);
      if (claimed.length === wanted) continue; // a full batch: more may be due right now
      const next = await nextDueAt(knex).catch(() => null);
      const untilNext = next ? next.getTime() - this.now().getTime() : pollMs;
      await this.sleep(Math.max(0, Math.min(untilNext, pollMs)));
    }
  }

  private sleep(ms: number): Promise<void> {
    if (this.woken || !this.running) return Promise.resolve();
    return new Promise((resolve) => {
      const done = () => {
        clearTimeout(timer);
        this.wakeSleeper = undefined;
        resolve();
      };
      const timer = setTimeout(done, ms);
      this.wakeSleeper = done;
    });
  }

  private launch(webhook: ClaimedWebhook): void {
    this.inFlight++;
    void this.attempt(webhook).finally(() => {
      this.inFlight--;
      if (this.inFlight === 0) for (const resolve of this.drained) resolve();
      this.wake(); // a slot is free
    });
  }

  private async attempt(webhook: ClaimedWebhook): Promise<void> {
    const { logger } = this.options;
    let outcome: DeliveryOutcome;
    try {
      outcome = await this.options.deliver(await this.options.buildRequest(webhook));
    } catch (error) {
      // a bug, an unreadable secret or no bearer token: record it like a failed attempt so
      // operators see it, under a kind of its own, since the target is not to blame
      logger.error({ err: error, webhookId: webhook.id }, 'could not prepare the delivery');
      outcome = {
        startedAt: this.now(),
        durationMs: 0,
        statusCode: null,
        errorKind: 'internal',
        responseBody: null,
      };
    }
    const result = this.resultOf(webhook, outcome);
    // a success is routine (debug); a failure that will be retried is worth a line (info); a
    // webhook that failed for good needs an operator (warn)
    const level = result.state === 3 ? 'debug' : result.state === 2 ? 'info' : 'warn';
    logger[level](
      {
        webhookId: webhook.id,
        registrationId: webhook.registration_id,
        attempt: webhook.attempt,
        statusCode: outcome.statusCode,
        errorKind: outcome.errorKind,
        durationMs: outcome.durationMs,
        state: result.state,
      },
      'attempt',
    );
    this.results.push(result);
    this.options.onResult?.(result);
    this.scheduleFlush();
  }

  /** Successful on a 2xx; else Retrying after the scheduled wait, or Failed after the last attempt. */
  private resultOf(webhook: ClaimedWebhook, outcome: DeliveryOutcome): AttemptResult {
    const base = {
      webhookId: webhook.id,
      registrationId: webhook.registration_id,
      groupKey: webhook.group_key,
      attempt: webhook.attempt,
      startedAt: outcome.startedAt,
      durationMs: outcome.durationMs,
      statusCode: outcome.statusCode,
      errorKind: outcome.errorKind,
      responseBody: outcome.responseBody,
    };
    if (outcome.errorKind === null) return { ...base, state: 3, retryDelayMs: null, releasesGroup: true };
    const retryAfterMs = parseRetryAfter(outcome.retryAfter, this.now().getTime());
    const delay = nextAttemptDelay(this.options.schedule, webhook.attempt, retryAfterMs);
    if (delay === null) {
      return {
        ...base,
        state: 4,
        retryDelayMs: null,
        releasesGroup: webhook.should_group_continue_after_fail,
      };
    }
    return { ...base, state: 2, retryDelayMs: delay, releasesGroup: false };
  }

  /** Starts a flush unless one runs; the running one loops until no result is left. */
  private scheduleFlush(): void {
    if (this.flushing) return;
    this.flushing = new Promise<void>((resolve) => setImmediate(resolve))
      .then(() => this.flush())
      .finally(() => {
        this.flushing = undefined;
        if (this.results.length > 0) this.scheduleFlush();
      });
  }

  private async flush(): Promise<void> {
    const { knex, logger, dispatcherId } = this.options;
    while (this.results.length > 0) {
      const batch = this.results.splice(0, 500);
      for (let attempt = 1; ; attempt++) {
        try {
          const applied = await completeWebhooks(knex, dispatcherId, batch);
          if (applied.length < batch.length) {
            logger.warn(
              { lost: batch.length - applied.length },
              'results dropped: their lease had passed to another dispatcher',
            );
          }
          // What was just written may be due before the loop's timer: a retry whose wait is
          // shorter than the sleep (computed while these rows were still leased), or the next
          // webhook of a released group, due now. Neither sends a NOTIFY, so look again.
          if (applied.length > 0) this.wake();
          break;
        } catch (error) {
          // the rows stay leased to us; when the database is back they complete, or the lease
          // runs out and they are delivered again
          logger.error({ err: error, attempt }, 'writing results failed');
          if (attempt >= 8) break;
          await new Promise((r) => setTimeout(r, 100 * 2 ** attempt));
        }
      }
    }
  }
}
