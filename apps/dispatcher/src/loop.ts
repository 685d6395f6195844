import {
  claimNotifiedWebhooks,
  claimWebhooks,
  DUE_IDS_MAX,
  stoppedDeliveries,
  type Claim,
} from '@platform/db';
import { systemClock, type Clock } from './clock';
import { ResultFlusher, type FlusherOptions, type FlushReport } from './flusher';
import { Launcher, type LauncherOptions } from './launcher';

export interface DeliveryLoopOptions extends Omit<LauncherOptions, 'clock'>, Omit<FlusherOptions, 'clock'> {
  /** Rows one claim takes at most. */
  batchSize: number;
  /** Longest sleep without a notification: covers lost NOTIFYs and retries falling due. */
  pollMs: number;
  /** Timestamps, sleeps and deadlines; the system clock unless a test moves time itself. */
  clock?: Clock;
  /** Called as each claim is sent: `fair` (`claimWebhooks`) or `notified` (`claimNotifiedWebhooks`). */
  onClaim?(kind: 'fair' | 'notified'): void;
}

/**
 * The claim → deliver → complete loop (docs/dispatcher.md#structure). Claims due webhooks in
 * batches sized to the free delivery slots and keeps claiming while batches come back full;
 * otherwise sleeps until a NOTIFY (`wake`), the earliest future `next_attempt_at`, or the
 * fallback poll. The `Launcher` delivers what it claims; the `ResultFlusher` writes the results
 * and reports the groups' next webhooks they leased to us.
 */
export class DeliveryLoop {
  private running = false;
  private loop: Promise<void> | undefined;
  private lastTurn = 0;
  private woken = false;
  private wakeSleeper: (() => void) | undefined;
  /** Whether a claim may find due work: false after a claim came back short, until a wake. */
  private mayHaveWork = true;
  /** Wake-ups so far: one that comes while a claim runs must survive the claim's short answer. */
  private wakes = 0;
  /**
   * The rows the wake-ups since the last claim began named (`due:` ids), while nothing else asked
   * for a claim: the notified rows' claim takes them by primary key (docs/dispatcher.md › The
   * notified rows' claim). null: the fair claim is due (a wake-up without ids, a retry falling due,
   * the poll, a claim that left work behind, or a notified rows' claim that left rows to it).
   */
  private notified: number[] | null = null;
  /** When the earliest known retry falls due, or the fallback poll (epoch ms). */
  private dueAt = 0;
  /**
   * The earliest retry a flush scheduled while a claim was on its way (epoch ms). The claim's
   * next due time comes from its snapshot, taken before that retry was written, so the timer set
   * after the claim must not lose it.
   */
  private retryDueDuringClaim = Infinity;
  /**
   * The round-robin cursor over registrations (docs/dispatcher.md › Scheduling): where the last
   * claim's walk ended, where the next one starts.
   */
  private cursor = 0;
  /**
   * Times the walk wrapped around since a claim last leased anything. A claim that stopped its
   * walk early says `more`; two wraps with nothing leased have covered every registration, so the
   * loop then sleeps instead of walking on (every due endpoint held back: no busy loop).
   */
  private emptyWraps = 0;
  /** The refresh of stopped registrations and held endpoints under way, and whether another is asked for. */
  private refreshing: Promise<void> | undefined;
  private refreshAgain = false;
  private readonly clock: Clock;
  private readonly flusher: ResultFlusher;
  private readonly launcher: Launcher;

  constructor(private readonly options: DeliveryLoopOptions) {
    this.clock = options.clock ?? systemClock;
    const clock = this.clock;
    const { limits } = options;
    this.flusher = new ResultFlusher({ ...options, clock }, (report) => this.written(report));
    this.launcher = new Launcher(
      { ...options, clock },
      {
        isRunning: () => this.running,
        record: (result) => this.flusher.add(result),
        // claim again if the last claim left work of this endpoint behind and enough room is free
        slotFreed: (target) =>
          limits.isWaiting(target) && limits.worthClaiming(target) ? this.wake() : this.nudge(),
        staleReturned: () => this.wake(),
      },
    );
  }

  /** Deliveries currently in flight. */
  get active(): number {
    return this.launcher.active;
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

  /**
   * A hint that work may be due (a NOTIFY, a reconnected LISTEN); never lost while claiming.
   * `ids`: the rows a NOTIFY named as due (`parseDueIds`); without them, the fair claim runs.
   */
  wake(ids?: readonly number[]): void {
    if (ids === undefined || this.notified === null || this.notified.length + ids.length > DUE_IDS_MAX)
      this.notified = null;
    else this.notified.push(...ids);
    this.wakes++;
    this.mayHaveWork = true;
    this.nudge();
  }

  /**
   * Deliveries stopped somewhere (the `stopped` notification: a registration paused or disabled,
   * an endpoint held by a `Retry-After`), or a notification may have been lost (LISTEN came
   * back): asks the database which of the registrations and endpoints we hold buffered webhooks
   * of may not be sent now, and hands those webhooks back without an attempt. One query per
   * notification, none per delivery; notifications that come while it runs fold into one more.
   */
  refreshStopped(): Promise<void> {
    if (this.refreshing) {
      this.refreshAgain = true;
      return this.refreshing;
    }
    this.refreshing = (async () => {
      do {
        this.refreshAgain = false;
        const { registrations, targets } = this.launcher.bufferedOwners();
        if (registrations.length === 0) break;
        try {
          const stopped = await stoppedDeliveries(this.options.knex, registrations, targets);
          const now = this.clock.now();
          for (const { id, heldForMs } of stopped.held) this.launcher.hold(id, now + heldForMs, true);
          this.launcher.releaseStopped(new Set(stopped.registrations));
        } catch (error) {
          // what is buffered is sent as claimed, as before; the next notification asks again
          this.options.logger.warn({ err: error }, 'could not read stopped registrations and held endpoints');
        }
      } while (this.refreshAgain);
    })().finally(() => {
      this.refreshing = undefined;
    });
    return this.refreshing;
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
    await this.launcher.drain(deadlineMs);
    await this.flusher.flush();
  }

  /**
   * Claims into a buffer of up to twice the concurrency and launches from it into free slots.
   * Under load the buffer refills in claims of at least a quarter of its size instead of one
   * claim per freed slot, so a claim's round trip and commit are shared by many deliveries; at
   * rest (nothing buffered, a slot free) any due work is claimed at once.
   */
  private async run(): Promise<void> {
    const { knex, logger, batchSize, concurrency, leaseMs, dispatcherId, pollMs, limits } = this.options;
    const { clock, launcher } = this;
    const capacity = 2 * concurrency;
    const refillAt = Math.max(1, Math.ceil(capacity / 4));
    let failures = 0;
    while (this.running) {
      this.lastTurn = clock.now();
      this.woken = false;
      launcher.launchBuffered();
      if (clock.now() >= this.dueAt) {
        this.mayHaveWork = true;
        this.notified = null;
      }
      const room = capacity - launcher.active - launcher.buffered;
      // a free slot that nothing buffered may take (empty, or every buffered target at its limit)
      const starving = launcher.active < concurrency;
      if (!this.mayHaveWork || room <= 0 || (!starving && room < refillAt)) {
        // a NOTIFY, a flush, a freed slot or the timer wakes us
        await this.sleep(Math.max(0, this.dueAt - clock.now()));
        continue;
      }
      const wanted = Math.min(room, batchSize);
      // stamped before the statement: the lease starts somewhere in its round trip, and a stalled
      // event loop must not make a late answer look fresh
      const claimedAt = clock.now();
      const wakesBefore = this.wakes;
      const notified = this.notified;
      // the wake-ups from here on are the next claim's
      this.notified = [];
      if (notified !== null && notified.length > 0 && notified.length <= wanted) {
        // the only reason to claim is rows a NOTIFY named: take them by primary key
        this.options.onClaim?.('notified');
        try {
          const fast = await claimNotifiedWebhooks(knex, {
            ids: notified,
            leaseMs,
            dispatcherId,
            hostRoom: limits.hostRoom(),
            ...limits.notifiedRooms(),
          });
          failures = 0;
          launcher.take(fast.leased, claimedAt);
          // rows it left (a rule to apply, a second row of one endpoint): the fair claim next
          if (fast.rest > 0) this.notified = null;
          else if (this.wakes === wakesBefore) this.mayHaveWork = false;
        } catch (error) {
          failures++;
          this.notified = null;
          logger.error({ err: error }, 'claim of notified webhooks failed; retrying');
          await this.sleep(Math.min(pollMs, 100 * 2 ** Math.min(failures, 6)));
        }
        continue;
      }
      let claim: Claim;
      this.retryDueDuringClaim = Infinity;
      this.options.onClaim?.('fair');
      try {
        claim = await claimWebhooks(knex, {
          batch: wanted,
          leaseMs,
          dispatcherId,
          after: this.cursor,
          ...limits.claimRooms(),
        });
        failures = 0;
      } catch (error) {
        failures++;
        this.notified = null;
        logger.error({ err: error }, 'claim failed; retrying');
        await this.sleep(Math.min(pollMs, 100 * 2 ** Math.min(failures, 6)));
        continue;
      }
      limits.setWaiting(claim.cappedTargets);
      launcher.take(claim.leased, claimedAt, new Set(claim.openTargets));
      this.cursor = claim.cursor;
      if (claim.leased.length > 0) this.emptyWraps = 0;
      else if (claim.wrapped) this.emptyWraps++;
      // a full batch, registrations held to their share of it, or a walk that stopped before a
      // whole lap: more may be due right now
      if (
        claim.leased.length === wanted ||
        (claim.more && this.emptyWraps < 2) ||
        limits.anyWaitingWithRoom()
      ) {
        // (or a target left with work freed room while the claim was on its way): claim again, fairly
        this.notified = null;
        continue;
      }
      // everything due that we may take is claimed: sleep until new work is announced, a slot of
      // a target with work left frees, or the next retry falls due (the claim says when)
      // Unless a wake-up came while it ran: the claim read one snapshot, taken when it began, so
      // the work a NOTIFY announced meanwhile may have been invisible to it (and to the next due
      // time it answered). Claim again rather than sleep on it: the rows those wake-ups named by
      // primary key, when they named rows and nothing else (`notified`), else fairly.
      if (this.wakes === wakesBefore) this.mayHaveWork = false;
      const now = clock.now();
      const untilNext = claim.nextDueAt ? new Date(claim.nextDueAt).getTime() - now : pollMs;
      this.dueAt = Math.min(now + Math.max(0, Math.min(untilNext, pollMs)), this.retryDueDuringClaim);
    }
  }

  /** A batch of results is written: take what it leased us; a retry it scheduled moves the timer. */
  private written({ leased, leasedAt, nextRetryAt, held }: FlushReport): void {
    if (held.length > 0) {
      // the holds are written: what we buffered of those endpoints goes back, uncounted
      this.launcher.holdsWritten(held);
      this.launcher.releaseStopped();
    }
    this.launcher.take(leased, leasedAt);
    this.dueAt = Math.min(this.dueAt, nextRetryAt);
    this.retryDueDuringClaim = Math.min(this.retryDueDuringClaim, nextRetryAt);
    this.nudge();
  }

  /** Makes the loop take another turn (a slot is free), without suggesting new work is due. */
  private nudge(): void {
    this.woken = true;
    this.wakeSleeper?.();
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
}
