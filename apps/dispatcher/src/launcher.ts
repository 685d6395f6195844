import { releaseClaims, type AttemptResult, type ClaimedWebhook, type Knex } from '@platform/db';
import type { DeliveryOutcome, DeliveryRequest } from '@platform/delivery';
import { attemptOutcome } from '@platform/shared';
import type { Logger } from 'pino';
import type { Clock } from './clock';
import { attemptLogLevel, attemptResult, outcomeWithoutRequest } from './outcome';
import type { TargetLimits } from './target-limits';

export interface LauncherOptions {
  knex: Knex;
  logger: Logger;
  dispatcherId: string;
  /** Waits before each attempt (ms); its length is the number of attempts. */
  schedule: readonly number[];
  /** Deliveries in flight at most. */
  concurrency: number;
  /**
   * How long after its claim a buffered webhook may still be launched: the lease minus the
   * longest delivery, so a delivery always ends inside its lease.
   */
  launchWithinMs: number;
  /** The per-target limits and fair shares (`TargetLimits`). */
  limits: TargetLimits;
  buildRequest(webhook: ClaimedWebhook): Promise<DeliveryRequest>;
  /** Sends `webhook`'s request (one attempt). */
  deliver(request: DeliveryRequest, webhook: ClaimedWebhook): Promise<DeliveryOutcome>;
  clock: Clock;
  /** Called once per recorded attempt, for metrics. */
  onResult?(result: AttemptResult): void;
}

/** Where the launcher's work goes, and what it tells the loop. */
export interface LauncherLinks {
  /** Whether the loop takes work; once it stops, whatever `take` is given goes back to the queue. */
  isRunning(): boolean;
  /** Takes each attempt's result to be written. */
  record(result: AttemptResult): void;
  /** A delivery to `targetId` ended, so a slot is free. */
  slotFreed(targetId: number): void;
  /** Rows left too long in the buffer went back to the queue, due now. */
  staleReturned(): void;
}

/**
 * The webhooks leased to this dispatcher, from lease to result: buffered, launched into free
 * delivery slots in claim order (which interleaves the targets) as their targets' limits allow,
 * and each attempt recorded.
 */
export class Launcher {
  private inFlight = 0;
  /** Claimed, not yet launched: our lease holds them. */
  private readonly buffer: { webhook: ClaimedWebhook; claimedAt: number }[] = [];
  private readonly drained = new Set<() => void>();
  /**
   * Endpoints held by a `Retry-After` (docs/dispatcher.md › Retry-After hold): until when (epoch
   * ms), and whether the hold is in the database yet. Nothing of theirs is launched meanwhile;
   * their buffered webhooks are handed back once the hold is written (before that, a claim
   * could take them straight back and send them).
   */
  private readonly holds = new Map<number, { until: number; written: boolean }>();

  constructor(
    private readonly options: LauncherOptions,
    private readonly links: LauncherLinks,
  ) {}

  /** Deliveries in flight. */
  get active(): number {
    return this.inFlight;
  }

  /** Webhooks claimed and waiting for a slot. */
  get buffered(): number {
    return this.buffer.length;
  }

  /**
   * Takes webhooks leased to us: an interrupted try or a webhook of an open-circuit target is
   * recorded at once, without a request; the rest is buffered and launched as free slots and
   * their targets' limits allow. Hands them back once the loop stopped. `claimedAt` is when the
   * statement that leased them was sent.
   */
  take(leased: readonly ClaimedWebhook[], claimedAt: number, openTargets?: ReadonlySet<number>): void {
    const deliverable = leased.filter((webhook) => !webhook.registration_deleted);
    if (!this.links.isRunning()) {
      void this.handBack(deliverable.map((webhook) => webhook.id));
      return;
    }
    const { limits, clock } = this.options;
    for (const webhook of deliverable) {
      if (webhook.interrupted) this.record(webhook, outcomeWithoutRequest('interrupted', clock.now()));
      else if (openTargets?.has(webhook.target_id))
        this.record(webhook, outcomeWithoutRequest('circuit-open', clock.now()));
      else {
        this.buffer.push({ webhook, claimedAt });
        limits.buffered(webhook.target_id, webhook.origin);
      }
    }
    // a claim that read its snapshot before a hold was written may still bring the endpoint's rows
    if (this.holds.size > 0) this.releaseStopped();
    this.launchBuffered();
  }

  /**
   * Holds an endpoint until `until` (epoch ms): nothing of it is launched until then. `written`:
   * the hold is in the database (read from it, or our result with it was written), so what we
   * buffered of it can go back.
   */
  hold(target: number, until: number, written: boolean): void {
    const known = this.holds.get(target);
    this.holds.set(target, {
      until: Math.max(until, known?.until ?? 0),
      written: written || (known?.written ?? false),
    });
  }

  /** Our results holding these endpoints are written: their holds are in the database. */
  holdsWritten(targets: Iterable<number>): void {
    for (const target of targets) {
      const known = this.holds.get(target);
      if (known) known.written = true;
    }
  }

  /** Whether an endpoint is held now (a hold that ended is forgotten). */
  private isHeld(target: number): boolean {
    const hold = this.holds.get(target);
    if (!hold) return false;
    if (hold.until > this.options.clock.now()) return true;
    this.holds.delete(target);
    return false;
  }

  /** The registrations and endpoints the buffer holds webhooks of. */
  bufferedOwners(): { registrations: number[]; targets: number[] } {
    const registrations = new Set<number>();
    const targets = new Set<number>();
    for (const { webhook } of this.buffer) {
      registrations.add(webhook.registration_id);
      targets.add(webhook.target_id);
    }
    return { registrations: [...registrations], targets: [...targets] };
  }

  /**
   * Hands back, without an attempt, the buffered webhooks that must not be sent now: those of
   * `stoppedRegistrations` (paused, disabled, deleted) and of endpoints whose hold is written.
   * They wait in the queue, due, for the registration's resume or the hold's end.
   */
  releaseStopped(stoppedRegistrations: ReadonlySet<number> = new Set()): void {
    const released: number[] = [];
    let kept = 0;
    for (let i = 0; i < this.buffer.length; i++) {
      const entry = this.buffer[i]!;
      const { registration_id: registration, target_id: target } = entry.webhook;
      if (
        stoppedRegistrations.has(registration) ||
        (this.isHeld(target) && this.holds.get(target)!.written)
      ) {
        released.push(entry.webhook.id);
        this.options.limits.unbuffered(target);
      } else {
        this.buffer[kept++] = entry;
      }
    }
    this.buffer.length = kept;
    if (released.length > 0) {
      this.options.logger.debug({ count: released.length }, 'buffered webhooks handed back: stopped or held');
      void this.handBack(released);
    }
  }

  /**
   * Fills free slots from the buffer, skipping webhooks whose target is at its limit or held. A row that
   * waited so long that its delivery could outlive its lease (every slot stuck on slow targets)
   * is handed back instead, so no second dispatcher can deliver it while we still do.
   */
  launchBuffered(): void {
    const stale: number[] = [];
    const { limits, concurrency, launchWithinMs, clock } = this.options;
    const now = clock.now();
    let kept = 0;
    for (let i = 0; i < this.buffer.length; i++) {
      const entry = this.buffer[i]!;
      const target = entry.webhook.target_id;
      if (now - entry.claimedAt > launchWithinMs) {
        stale.push(entry.webhook.id);
        limits.unbuffered(target);
      } else if (this.inFlight < concurrency && !this.isHeld(target) && limits.canLaunch(target)) {
        this.launch(entry.webhook);
      } else {
        this.buffer[kept++] = entry;
      }
    }
    this.buffer.length = kept;
    // due again now: claim them afresh (a new lease) once a slot frees, or let another replica
    if (stale.length > 0) void this.handBack(stale).then(() => this.links.staleReturned());
  }

  /**
   * Hands the buffer back and lets the deliveries in flight finish, until `deadlineMs`. Whatever
   * is still in flight then keeps its lease and is delivered again after it runs out.
   */
  async drain(deadlineMs: number): Promise<void> {
    const buffered = this.buffer.splice(0);
    for (const { webhook } of buffered) this.options.limits.unbuffered(webhook.target_id);
    await this.handBack(buffered.map((b) => b.webhook.id));
    if (this.inFlight === 0) return;
    const { clock } = this.options;
    await new Promise<void>((resolve) => {
      const timer = clock.setTimeout(resolve, deadlineMs);
      this.drained.add(() => {
        clock.clearTimeout(timer);
        resolve();
      });
    });
  }

  /** Gives claimed rows we will not deliver back to the queue, due now, their attempt uncounted. */
  private async handBack(ids: number[]): Promise<void> {
    if (ids.length === 0) return;
    const { knex, dispatcherId, logger } = this.options;
    try {
      await releaseClaims(knex, dispatcherId, ids);
    } catch (error) {
      // they stay leased to us and come back when the lease runs out
      logger.warn({ err: error, count: ids.length }, 'could not hand claims back');
    }
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
      this.links.slotFreed(webhook.target_id);
    });
  }

  private async attempt(webhook: ClaimedWebhook): Promise<DeliveryOutcome> {
    const { logger, clock } = this.options;
    let outcome: DeliveryOutcome;
    try {
      outcome = await this.options.deliver(await this.options.buildRequest(webhook), webhook);
    } catch (error) {
      // a bug, an unreadable secret or no bearer token: record it like a failed attempt so
      // operators see it, under a kind of its own, since the target is not to blame
      logger.error({ err: error, webhookId: webhook.id }, 'could not prepare the delivery');
      outcome = outcomeWithoutRequest('internal', clock.now());
    }
    this.record(webhook, outcome);
    return outcome;
  }

  /** Logs an attempt's outcome and passes its result on to be written. */
  private record(webhook: ClaimedWebhook, outcome: DeliveryOutcome): void {
    const { logger, schedule, clock } = this.options;
    const result = attemptResult(webhook, outcome, schedule, clock.now());
    // the endpoint asked for a pause: launch nothing more of it here at once; what is buffered
    // goes back once this result (and with it the hold) is written
    if (result.holdMs !== null) this.hold(webhook.target_id, clock.now() + result.holdMs, false);
    logger[attemptLogLevel(result)](
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
    this.options.onResult?.(result);
    this.links.record(result);
  }
}
