import {
  claimWebhooks,
  completeWebhooks,
  releaseClaims,
  type AttemptResult,
  type Claim,
  type ClaimedWebhook,
  type CompletedBatch,
  type HealthPolicy,
  type Knex,
} from '@platform/db';
import type { Logger } from 'pino';
import { attemptOutcome, WebhookState } from '@platform/shared';
import { systemClock, type Clock } from './clock';
import type { DeliveryOutcome, DeliveryRequest } from '@platform/delivery';
import { nextAttemptDelay, parseRetryAfter } from './retry';
import type { TargetLimits } from './target-limits';

export interface DeliveryLoopOptions {
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
  /**
   * How long after its claim a buffered webhook may still be launched: the lease minus the
   * longest delivery, so a delivery always ends inside its lease.
   */
  launchWithinMs: number;
  /** Longest sleep without a notification: covers lost NOTIFYs and retries falling due. */
  pollMs: number;
  /** The per-target limits and fair shares (`TargetLimits`). */
  limits: TargetLimits;
  /** When breakers open and registrations are disabled. */
  policy: HealthPolicy;
  buildRequest(webhook: ClaimedWebhook): Promise<DeliveryRequest>;
  /** Sends `webhook`'s request (one attempt). */
  deliver(request: DeliveryRequest, webhook: ClaimedWebhook): Promise<DeliveryOutcome>;
  /** Timestamps, sleeps and deadlines; the system clock unless a test moves time itself. */
  clock?: Clock;
  /** Called once per recorded attempt, for metrics. */
  onResult?(result: AttemptResult): void;
  /** Called with the registrations a flush disabled, for metrics. */
  onDisabled?(disabled: CompletedBatch['disabled']): void;
}

/**
 * The claim → deliver → complete loop (design part 3). Claims due webhooks in batches sized to
 * the free delivery slots and keeps claiming while batches come back full; otherwise sleeps until
 * a NOTIFY (`wake`), the earliest future `next_attempt_at`, or the fallback poll. Results are
 * written in batches by one flusher: whatever finished while the previous flush ran goes in the
 * next one, so under load a flush carries many results and at rest one.
 */
export class DeliveryLoop {
  private running = false;
  private loop: Promise<void> | undefined;
  private inFlight = 0;
  private woken = false;
  private wakeSleeper: (() => void) | undefined;
  private readonly results: AttemptResult[] = [];
  private flushing: Promise<void> | undefined;
  private readonly drained = new Set<() => void>();
  /** Claimed, not yet launched: our lease holds them. */
  private readonly buffer: { webhook: ClaimedWebhook; claimedAt: number }[] = [];
  /** Whether a claim may find due work: false after a claim came back short, until a wake. */
  private mayHaveWork = true;
  /** Wake-ups so far: one that comes while a claim runs must survive the claim's short answer. */
  private wakes = 0;
  /** When the earliest known retry falls due, or the fallback poll (epoch ms). */
  private dueAt = 0;
  /**
   * The earliest retry a flush scheduled while a claim was on its way (epoch ms). The claim's
   * next due time comes from its snapshot, taken before that retry was written, so the timer set
   * after the claim must not lose it.
   */
  private retryDueDuringClaim = Infinity;
  private readonly clock: Clock;
  private lastTurn = 0;

  constructor(private readonly options: DeliveryLoopOptions) {
    this.clock = options.clock ?? systemClock;
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
    this.wakes++;
    this.mayHaveWork = true;
    this.nudge();
  }

  /** Makes the loop take another turn (a slot is free), without suggesting new work is due. */
  private nudge(): void {
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
    const buffered = this.buffer.splice(0);
    for (const { webhook } of buffered) this.options.limits.unbuffered(webhook.target_id);
    await this.handBack(buffered.map((b) => b.webhook.id));
    if (this.inFlight > 0) {
      await new Promise<void>((resolve) => {
        const timer = this.clock.setTimeout(resolve, deadlineMs);
        this.drained.add(() => {
          this.clock.clearTimeout(timer);
          resolve();
        });
      });
    }
    this.scheduleFlush();
    await this.flushing;
  }

  /**
   * Claims into a buffer of up to twice the concurrency and launches from it into free slots.
   * Under load the buffer refills in claims of at least a quarter of its size instead of one
   * claim per freed slot, so a claim's round trip and commit are shared by many deliveries; at
   * rest (nothing buffered, a slot free) any due work is claimed at once.
   */
  private async run(): Promise<void> {
    const { knex, logger, batchSize, concurrency, leaseMs, dispatcherId, pollMs } = this.options;
    const clock = this.clock;
    const capacity = 2 * concurrency;
    const refillAt = Math.max(1, Math.ceil(capacity / 4));
    let failures = 0;
    while (this.running) {
      this.lastTurn = clock.now();
      this.woken = false;
      this.launchBuffered();
      if (clock.now() >= this.dueAt) this.mayHaveWork = true;
      const room = capacity - this.inFlight - this.buffer.length;
      // a free slot that nothing buffered may take (empty, or every buffered target at its limit)
      const starving = this.inFlight < concurrency;
      if (!this.mayHaveWork || room <= 0 || (!starving && room < refillAt)) {
        // a NOTIFY, a flush, a freed slot or the timer wakes us
        await this.sleep(Math.max(0, this.dueAt - clock.now()));
        continue;
      }
      const wanted = Math.min(room, batchSize);
      let claim: Claim;
      // stamped before the statement: the lease starts somewhere in its round trip, and a stalled
      // event loop must not make a late answer look fresh
      const claimedAt = clock.now();
      this.retryDueDuringClaim = Infinity;
      const wakesBefore = this.wakes;
      const { limits } = this.options;
      try {
        claim = await claimWebhooks(knex, {
          batch: wanted,
          leaseMs,
          dispatcherId,
          rooms: limits.rooms(),
          defaultRoom: limits.defaultRoom(),
        });
        failures = 0;
      } catch (error) {
        failures++;
        logger.error({ err: error }, 'claim failed; retrying');
        await this.sleep(Math.min(pollMs, 100 * 2 ** Math.min(failures, 6)));
        continue;
      }
      limits.setWaiting(claim.cappedTargets);
      this.take(claim.leased, claimedAt, new Set(claim.openTargets));
      // a full batch, or registrations held to their share of it: more may be due right now
      if (claim.leased.length === wanted || claim.more) continue;
      // a target left with work may have freed room while the claim was on its way: claim again
      if (limits.anyWaitingWithRoom()) continue;
      // everything due that we may take is claimed: sleep until new work is announced, a slot of
      // a target with work left frees, or the next retry falls due (the claim says when)
      // Unless a wake-up came while it ran: the claim read one snapshot, taken when it began, so
      // the work a NOTIFY announced meanwhile may have been invisible to it (and to the next due
      // time it answered). Claim again rather than sleep on it.
      if (this.wakes === wakesBefore) this.mayHaveWork = false;
      const now = clock.now();
      const untilNext = claim.nextDueAt ? new Date(claim.nextDueAt).getTime() - now : pollMs;
      this.dueAt = Math.min(now + Math.max(0, Math.min(untilNext, pollMs)), this.retryDueDuringClaim);
    }
  }

  /**
   * Takes webhooks leased to us: an interrupted try or a webhook of an open-circuit target is
   * recorded at once, without a request; the rest is buffered and launched as free slots and
   * their targets' limits allow. Hands them back when stopping. `claimedAt` is when the
   * statement that leased them was sent.
   */
  private take(
    leased: readonly ClaimedWebhook[],
    claimedAt: number,
    openTargets?: ReadonlySet<number>,
  ): void {
    const deliverable = leased.filter((webhook) => !webhook.registration_deleted);
    if (!this.running) {
      void this.handBack(deliverable.map((webhook) => webhook.id));
      return;
    }
    for (const webhook of deliverable) {
      if (webhook.interrupted) this.recordWithoutRequest(webhook, 'interrupted');
      else if (openTargets?.has(webhook.target_id)) this.recordWithoutRequest(webhook, 'circuit-open');
      else {
        this.buffer.push({ webhook, claimedAt });
        this.options.limits.buffered(webhook.target_id);
      }
    }
    this.launchBuffered();
  }

  /**
   * Records an attempt that sends nothing: `circuit-open` (the target's breaker is open) or
   * `interrupted` (the try its previous lease counted never reported). The attempt counts, so
   * the retry schedule (spec part 8) and its 7 attempts keep their meaning.
   */
  private recordWithoutRequest(webhook: ClaimedWebhook, errorKind: 'circuit-open' | 'interrupted'): void {
    const outcome: DeliveryOutcome = {
      startedAt: new Date(this.clock.now()),
      durationMs: 0,
      statusCode: null,
      errorKind,
      responseBody: null,
    };
    this.record(webhook, outcome);
  }

  /**
   * Fills free slots from the buffer, in claim order (which interleaves the targets), skipping
   * webhooks whose target is at its limit. A row that waited so long that its delivery could
   * outlive its lease (every slot stuck on slow targets) is handed back instead, so no second
   * dispatcher can deliver it while we still do.
   */
  private launchBuffered(): void {
    const stale: number[] = [];
    const now = this.clock.now();
    const { limits, concurrency, launchWithinMs } = this.options;
    let kept = 0;
    for (let i = 0; i < this.buffer.length; i++) {
      const entry = this.buffer[i]!;
      const target = entry.webhook.target_id;
      if (now - entry.claimedAt > launchWithinMs) {
        stale.push(entry.webhook.id);
        limits.unbuffered(target);
      } else if (this.inFlight < concurrency && limits.canLaunch(target)) {
        this.launch(entry.webhook);
      } else {
        this.buffer[kept++] = entry;
      }
    }
    this.buffer.length = kept;
    // due again now: claim them afresh (a new lease) once a slot frees, or let another replica
    if (stale.length > 0) void this.handBack(stale).then(() => this.wake());
  }

  /** Gives claimed rows we will not deliver back to the queue, due now, their attempt uncounted. */
  private async handBack(ids: number[]): Promise<void> {
    if (ids.length === 0) return;
    try {
      await releaseClaims(this.options.knex, this.options.dispatcherId, ids);
    } catch (error) {
      // they stay leased to us and come back when the lease runs out
      this.options.logger.warn({ err: error, count: ids.length }, 'could not hand claims back');
    }
  }

  private sleep(ms: number): Promise<void> {
    if (this.woken || !this.running) return Promise.resolve();
    return new Promise((resolve) => {
      const done = () => {
        this.clock.clearTimeout(timer);
        this.wakeSleeper = undefined;
        resolve();
      };
      const timer = this.clock.setTimeout(done, ms);
      this.wakeSleeper = done;
    });
  }

  private launch(webhook: ClaimedWebhook): void {
    const { limits } = this.options;
    this.inFlight++;
    limits.launched(webhook.target_id);
    void this.attempt(webhook).then((outcome) => {
      this.inFlight--;
      limits.finished(
        webhook.target_id,
        attemptOutcome(outcome.errorKind, outcome.statusCode),
        outcome.durationMs,
      );
      if (this.inFlight === 0) for (const resolve of this.drained) resolve();
      // a slot is free; if the last claim left work of this target behind and enough of its
      // room is free again, claim it
      if (limits.isWaiting(webhook.target_id) && limits.worthClaiming(webhook.target_id)) this.wake();
      else this.nudge();
    });
  }

  private async attempt(webhook: ClaimedWebhook): Promise<DeliveryOutcome> {
    let outcome: DeliveryOutcome;
    try {
      outcome = await this.options.deliver(await this.options.buildRequest(webhook), webhook);
    } catch (error) {
      // a bug, an unreadable secret or no bearer token: record it like a failed attempt so
      // operators see it, under a kind of its own, since the target is not to blame
      this.options.logger.error({ err: error, webhookId: webhook.id }, 'could not prepare the delivery');
      outcome = {
        startedAt: new Date(this.clock.now()),
        durationMs: 0,
        statusCode: null,
        errorKind: 'internal',
        responseBody: null,
      };
    }
    this.record(webhook, outcome);
    return outcome;
  }

  /** Logs an attempt's outcome and queues its result for the next flush. */
  private record(webhook: ClaimedWebhook, outcome: DeliveryOutcome): void {
    const { logger } = this.options;
    const result = this.resultOf(webhook, outcome);
    // a success is routine (debug); a failure that will be retried is worth a line (info); a
    // webhook that failed for good needs an operator (warn)
    const level =
      result.state === WebhookState.Successful || outcome.errorKind === 'circuit-open'
        ? 'debug'
        : result.state === WebhookState.Retrying
          ? 'info'
          : 'warn';
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
      targetId: webhook.target_id,
      groupKey: webhook.group_key,
      attempt: webhook.attempt,
      startedAt: outcome.startedAt,
      durationMs: outcome.durationMs,
      statusCode: outcome.statusCode,
      errorKind: outcome.errorKind,
      responseBody: outcome.responseBody,
    };
    if (outcome.errorKind === null)
      return { ...base, state: WebhookState.Successful, retryDelayMs: null, releasesGroup: true };
    const retryAfterMs = parseRetryAfter(outcome.retryAfter, this.clock.now());
    const delay = nextAttemptDelay(this.options.schedule, webhook.attempt, retryAfterMs);
    if (delay === null) {
      return {
        ...base,
        state: WebhookState.Failed,
        retryDelayMs: null,
        releasesGroup: webhook.should_group_continue_after_fail,
      };
    }
    return { ...base, state: WebhookState.Retrying, retryDelayMs: delay, releasesGroup: false };
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
    const { knex, logger, dispatcherId, leaseMs, policy } = this.options;
    while (this.results.length > 0) {
      const batch = this.results.splice(0, 500);
      for (let attempt = 1; ; attempt++) {
        const leasedAt = this.clock.now();
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
          // the next webhooks of the groups these results released, already leased to us
          this.take(leased, leasedAt);
          // A retry may fall due before the loop's timer, computed while its row was still
          // leased; it sends no NOTIFY, so move the timer. Nothing else written here becomes
          // due: a released group's next webhook came back leased, a blocked group waits.
          for (const result of batch) {
            if (result.retryDelayMs !== null) {
              const due = this.clock.now() + result.retryDelayMs;
              this.dueAt = Math.min(this.dueAt, due);
              this.retryDueDuringClaim = Math.min(this.retryDueDuringClaim, due);
            }
          }
          this.nudge();
          break;
        } catch (error) {
          // the rows stay leased to us; when the database is back they complete, or the lease
          // runs out and they are delivered again
          logger.error({ err: error, attempt }, 'writing results failed');
          if (attempt >= 8) break;
          await new Promise<void>((r) => this.clock.setTimeout(r, 100 * 2 ** attempt));
        }
      }
    }
  }
}
