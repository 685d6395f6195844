import type { AttemptOutcome } from '@platform/shared';

export interface TargetLimitsOptions {
  /** The dispatcher's delivery slots, over all endpoints. */
  concurrency: number;
  /** DISPATCHER_MAX_PER_ENDPOINT: no endpoint's limit grows beyond it. */
  maxPerTarget: number;
  /**
   * DISPATCHER_MAX_PER_HOST: deliveries in flight to one origin at most, over all its endpoints,
   * shared evenly among those with work here. Unset: no cap per host.
   */
  maxPerHost?: number;
  /** A success slower than this does not grow the limit (the target is busy, not idle). */
  slowMs: number;
  /** The clock idle targets are forgotten by (epoch ms); `Date.now` unless a test moves time. */
  now?: () => number;
}

interface TargetState {
  /** The origin (scheme, host, port) of the endpoint: what the per-host cap counts. */
  origin: string;
  /** The adaptive limit: deliveries in flight to this target at most. */
  limit: number;
  inFlight: number;
  /** Claimed for this target and waiting in the loop's buffer. */
  buffered: number;
  /** When it last had nothing here (epoch ms); null while it has. */
  idleSince: number | null;
}

/** The limit a target starts with in this dispatcher, before it has answered anything. */
const INITIAL_LIMIT = 8;
/** What a target failure leaves of the limit. */
const BACKOFF = 0.5;
/**
 * How long a learned limit outlives the target's last delivery here: the longest breaker
 * cool-down by default, so a failing target stays backed off between its trials, while the map
 * (and the rooms every claim sends) holds only targets delivered to lately, not every target
 * this process ever saw.
 */
export const FORGET_IDLE_TARGET_MS = 10 * 60_000;

const isBusy = (state: TargetState): boolean => state.inFlight + state.buffered > 0;

/** The deliveries in flight to one origin here, and how many of its endpoints have work here. */
interface HostState {
  inFlight: number;
  busy: number;
}

/**
 * Per-endpoint delivery limits of one dispatcher (docs/dispatcher.md › Scheduling); a "target"
 * is an endpoint (`ClaimedWebhook.target_id`). AIMD, as Netflix's concurrency-limits
 * `AIMDLimit`: an endpoint starts at 8 in flight (or the cap); each fast success while at least
 * half its limit is in use adds one, up to DISPATCHER_MAX_PER_ENDPOINT; each target failure
 * (timeout, connection error, 5xx: `attemptOutcome`) halves it, down to one. On top of the
 * limit, two fair shares: while n endpoints have work here, none holds more than ⌈slots / n⌉ of
 * the slots; and while m endpoints of one origin have work here, none holds more than
 * ⌈DISPATCHER_MAX_PER_HOST / m⌉, the origin no more than DISPATCHER_MAX_PER_HOST in all. Alone, an
 * endpoint may have them all, within its limit.
 *
 * Claims ask `rooms()`: how many more webhooks each known target may take, counting those
 * in flight and buffered against twice its allowance (the buffer keeps a slot's next webhook
 * ready without a round trip). Launching asks `canLaunch`.
 */
export class TargetLimits {
  private readonly targets = new Map<number, TargetState>();
  private readonly hosts = new Map<string, HostState>();
  /** Targets the last claim left work behind for, though nothing of theirs is here yet. */
  private waiting = new Set<number>();
  private readonly initial: number;
  private readonly now: () => number;

  constructor(private readonly options: TargetLimitsOptions) {
    this.initial = Math.min(INITIAL_LIMIT, options.maxPerTarget);
    this.now = options.now ?? Date.now;
  }

  /** The adaptive limit of a target (its initial limit when unknown). */
  limitOf(target: number): number {
    return this.targets.get(target)?.limit ?? this.initial;
  }

  /** Deliveries in flight to a target. */
  inFlightOf(target: number): number {
    return this.targets.get(target)?.inFlight ?? 0;
  }

  /** How many targets share the slots now: those with work here or left waiting by the last claim. */
  private busyTargets(): number {
    let busy = 0;
    for (const [id, state] of this.targets)
      if (state.inFlight + state.buffered > 0 || this.waiting.has(id)) busy++;
    for (const id of this.waiting) if (!this.targets.has(id)) busy++;
    return Math.max(1, busy);
  }

  private share(): number {
    return Math.max(1, Math.ceil(this.options.concurrency / this.busyTargets()));
  }

  /** An endpoint's part of its origin's cap: the cap over the origin's endpoints with work here. */
  private hostShare(target: number): number {
    const { maxPerHost } = this.options;
    const state = this.targets.get(target);
    if (maxPerHost === undefined) return Infinity;
    const busy = state ? (this.hosts.get(state.origin)?.busy ?? 0) : 0;
    return Math.max(1, Math.ceil(maxPerHost / Math.max(1, busy + (state && !isBusy(state) ? 1 : 0))));
  }

  /** How many in flight a target may have now: its limit, within its fair shares. */
  private allowance(target: number): number {
    return Math.min(this.limitOf(target), this.share(), this.hostShare(target));
  }

  /** How many more webhooks a claim may take for a target now. */
  roomOf(target: number): number {
    const state = this.targets.get(target);
    if (!state) return this.defaultRoom();
    return Math.max(0, 2 * this.allowance(target) - state.inFlight - state.buffered);
  }

  /** What a claim takes from the limits: each endpoint's room, the default, what is held, the host's room. */
  claimRooms() {
    const rooms = this.rooms();
    return { rooms, defaultRoom: this.defaultRoom(), held: this.held(rooms), hostRoom: this.hostRoom() };
  }

  /**
   * The rooms a claim sends: targets with work here or a limit backed off below the initial one.
   * Any other target gets the default room (a healthy idle target starts small again, and its
   * learned limit lets it launch more as soon as its webhooks are buffered).
   */
  rooms(): Map<number, number> {
    const rooms = new Map<number, number>();
    const forgetBefore = this.now() - FORGET_IDLE_TARGET_MS;
    for (const [id, state] of this.targets) {
      if (state.idleSince !== null && state.idleSince < forgetBefore) this.targets.delete(id);
      else if (state.inFlight + state.buffered > 0 || state.limit < this.initial)
        rooms.set(id, this.roomOf(id));
    }
    return rooms;
  }

  /**
   * Whether a claim for this target is worth its round trip: half its room (its allowance) is
   * free. Claiming a webhook per freed slot would cost a claim per delivery.
   */
  worthClaiming(target: number): boolean {
    return this.roomOf(target) >= Math.max(1, this.allowance(target));
  }

  /** The room of a target this dispatcher holds nothing of. */
  defaultRoom(): number {
    return 2 * Math.min(this.initial, this.share());
  }

  /** What this dispatcher holds (in flight and buffered) of each target `rooms()` names. */
  held(rooms: ReadonlyMap<number, number>): Map<number, number> {
    const held = new Map<number, number>();
    for (const target of rooms.keys()) {
      const state = this.targets.get(target);
      held.set(target, state ? state.inFlight + state.buffered : 0);
    }
    return held;
  }

  /** What the endpoints of one origin may hold here together (in flight and buffered); none: no cap. */
  hostRoom(): number | undefined {
    const { maxPerHost } = this.options;
    return maxPerHost === undefined ? undefined : 2 * maxPerHost;
  }

  /**
   * What the notified rows' claim takes from the limits: the endpoints that have no room now, and
   * per origin this dispatcher holds webhooks of (in flight or buffered) how many it holds, so
   * the claim keeps each origin within `hostRoom()`.
   */
  notifiedRooms(): { fullTargets: number[]; origins: string[]; originHeld: number[] } {
    const fullTargets: number[] = [];
    const held = new Map<string, number>();
    for (const [id, state] of this.targets) {
      if (!isBusy(state)) continue;
      if (this.roomOf(id) < 1) fullTargets.push(id);
      held.set(state.origin, (held.get(state.origin) ?? 0) + state.inFlight + state.buffered);
    }
    return { fullTargets, origins: [...held.keys()], originHeld: [...held.values()] };
  }

  /** The last claim left due work behind for these targets (they were at their room). */
  setWaiting(targets: readonly number[]): void {
    this.waiting = new Set(targets);
  }

  /** Whether a claim left work behind for this target, so a freed slot of it is worth a claim. */
  isWaiting(target: number): boolean {
    return this.waiting.has(target);
  }

  /** Whether a target the last claim left work behind for is worth a claim now (its deliveries ended meanwhile). */
  anyWaitingWithRoom(): boolean {
    for (const target of this.waiting) if (this.worthClaiming(target)) return true;
    return false;
  }

  /** A webhook of `target`, whose origin is `origin`, is buffered. */
  buffered(target: number, origin: string): void {
    const state = this.state(target, origin);
    this.change(state, 0, 1);
    state.idleSince = null;
  }

  /** A buffered webhook leaves the buffer without launching (handed back). */
  unbuffered(target: number): void {
    const state = this.targets.get(target);
    if (!state) return;
    this.change(state, 0, -1);
    this.forgetIfIdle(target, state);
  }

  canLaunch(target: number): boolean {
    const state = this.targets.get(target);
    const { maxPerHost } = this.options;
    if (state && maxPerHost !== undefined && (this.hosts.get(state.origin)?.inFlight ?? 0) >= maxPerHost)
      return false;
    return this.inFlightOf(target) < this.allowance(target);
  }

  /** A buffered webhook is launched. */
  launched(target: number): void {
    const state = this.targets.get(target);
    if (state) this.change(state, 1, -1);
  }

  /** A delivery ended: the limit learns from its outcome. */
  finished(target: number, outcome: AttemptOutcome, durationMs: number): void {
    const state = this.targets.get(target);
    if (!state) return;
    const inUse = state.inFlight;
    this.change(state, -1, 0);
    if (outcome === 'target-failure') {
      state.limit = Math.max(1, Math.floor(state.limit * BACKOFF));
    } else if (outcome === 'success' && durationMs < this.options.slowMs && inUse * 2 >= state.limit) {
      state.limit = Math.min(this.options.maxPerTarget, state.limit + 1);
    }
    this.forgetIfIdle(target, state);
  }

  private state(target: number, origin: string): TargetState {
    let state = this.targets.get(target);
    if (!state) {
      state = { origin, limit: this.initial, inFlight: 0, buffered: 0, idleSince: null };
      this.targets.set(target, state);
    }
    return state;
  }

  /** Moves a target's counts (never below zero), and its origin's with them. */
  private change(state: TargetState, inFlight: number, buffered: number): void {
    const wasBusy = isBusy(state);
    const before = state.inFlight;
    state.inFlight = Math.max(0, state.inFlight + inFlight);
    state.buffered = Math.max(0, state.buffered + buffered);
    let host = this.hosts.get(state.origin);
    if (!host) {
      host = { inFlight: 0, busy: 0 };
      this.hosts.set(state.origin, host);
    }
    host.inFlight += state.inFlight - before;
    host.busy += Number(isBusy(state)) - Number(wasBusy);
    if (host.inFlight === 0 && host.busy === 0) this.hosts.delete(state.origin);
  }

  /**
   * A target with nothing here and its initial limit is forgotten at once. A learned limit is
   * kept while the target is idle, for `FORGET_IDLE_TARGET_MS`: a failing target cannot reset its
   * back-off by going idle for a moment, and a fast one keeps its limit through a pause in its
   * traffic; `rooms()` drops it after that.
   */
  private forgetIfIdle(target: number, state: TargetState): void {
    if (state.inFlight > 0 || state.buffered > 0) return;
    if (state.limit === this.initial) this.targets.delete(target);
    else state.idleSince = this.now();
  }
}
