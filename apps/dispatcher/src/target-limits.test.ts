import { describe, expect, it } from 'vitest';
import { FORGET_IDLE_TARGET_MS, TargetLimits } from './target-limits';

// The per-target limits of one dispatcher (AIMD within a fair share), without a database: every
// decision is a function of what was launched and how it finished (and, for forgetting idle
// targets, of a clock the test moves).

const FAST = 10;
const SLOW = 1_000;

function limits(
  options: { concurrency?: number; maxPerTarget?: number; maxPerHost?: number; now?: () => number } = {},
): TargetLimits {
  const concurrency = options.concurrency ?? 32;
  return new TargetLimits({
    concurrency,
    maxPerTarget: options.maxPerTarget ?? concurrency,
    maxPerHost: options.maxPerHost,
    slowMs: 500,
    now: options.now,
  });
}

/** The origin of endpoint `target`: its own host, unless `hosts` puts it on a shared one. */
const hosts = new Map<number, string>();
const originOf = (target: number): string => hosts.get(target) ?? `https://host-${target}.example`;

/** Buffers and launches `count` deliveries to `target`, as the loop does. */
function launch(l: TargetLimits, target: number, count: number): void {
  for (let i = 0; i < count; i++) {
    l.buffered(target, originOf(target));
    l.launched(target);
  }
}

/** Launches as many deliveries to `target` as it may have in flight now; answers how many. */
function fill(l: TargetLimits, target: number): number {
  let n = 0;
  while (l.canLaunch(target)) {
    launch(l, target, 1);
    n++;
  }
  return n;
}

describe('TargetLimits', () => {
  it('starts a target at 8 in flight, or at the cap when that is lower', () => {
    expect(limits().limitOf(1)).toBe(8);
    expect(fill(limits(), 1)).toBe(8);
    expect(limits({ maxPerTarget: 3 }).limitOf(1)).toBe(3);
    expect(fill(limits({ maxPerTarget: 3 }), 1)).toBe(3);
  });

  it('grows by one on a fast success while at least half its limit is in use', () => {
    const l = limits();
    launch(l, 1, 4); // half of 8 in use
    l.finished(1, 'success', FAST);
    expect(l.limitOf(1)).toBe(9);
    // 3 left in flight: less than half of 9
    l.finished(1, 'success', FAST);
    expect(l.limitOf(1)).toBe(9);
  });

  it('does not grow on a slow success, a failure the target is not to blame for, or a neutral end', () => {
    const l = limits();
    launch(l, 1, 8);
    l.finished(1, 'success', SLOW);
    l.finished(1, 'failure', FAST); // a 4xx: the target answered
    l.finished(1, 'neutral', 0);
    expect(l.limitOf(1)).toBe(8);
    expect(l.inFlightOf(1)).toBe(5);
  });

  it('halves on a target failure, down to one', () => {
    const l = limits();
    launch(l, 1, 8);
    const seen: number[] = [];
    for (let i = 0; i < 5; i++) {
      l.finished(1, 'target-failure', SLOW);
      seen.push(l.limitOf(1));
    }
    expect(seen).toEqual([4, 2, 1, 1, 1]);
    // one in flight at most now, though 3 are still out there
    expect(l.canLaunch(1)).toBe(false);
    // and a fast success at that limit grows it again, by one
    l.finished(1, 'success', FAST);
    expect(l.limitOf(1)).toBe(2);
  });

  it('keeps a backed-off limit while the target is idle, so a pause does not reset it', () => {
    const l = limits();
    launch(l, 1, 1);
    l.finished(1, 'target-failure', FAST);
    expect(l.inFlightOf(1)).toBe(0);
    expect(l.limitOf(1)).toBe(4);
    expect(l.rooms().get(1)).toBe(8); // twice the limit: known, with nothing here
  });

  it('forgets a learned limit once the target has been idle for FORGET_IDLE_TARGET_MS', () => {
    let now = 1_000_000;
    const l = limits({ now: () => now });
    launch(l, 1, 1);
    l.finished(1, 'target-failure', FAST);
    now += FORGET_IDLE_TARGET_MS - 1;
    expect(l.rooms().get(1)).toBe(8); // still backed off
    // busy again, then idle again: the idle time counts from the last delivery
    launch(l, 1, 1);
    now += 2;
    l.finished(1, 'failure', FAST);
    now += FORGET_IDLE_TARGET_MS - 1;
    expect(l.rooms().has(1)).toBe(true);
    now += 2;
    expect(l.rooms().has(1)).toBe(false); // forgotten: the claims no longer carry it
    expect(l.limitOf(1)).toBe(8);
  });

  it('never grows past DISPATCHER_MAX_PER_ENDPOINT', () => {
    const l = limits({ concurrency: 32, maxPerTarget: 10 });
    launch(l, 1, 8);
    for (let i = 0; i < 20; i++) {
      l.finished(1, 'success', FAST);
      launch(l, 1, 1);
    }
    expect(l.limitOf(1)).toBe(10);
    fill(l, 1);
    expect(l.inFlightOf(1)).toBe(10);
  });

  it('lets a lone target grow to every slot when nobody else has work', () => {
    const l = limits({ concurrency: 32 });
    expect(fill(l, 1)).toBe(8);
    // each fast success while the limit is in use grows it by one, and frees a slot to refill
    for (let i = 0; i < 40; i++) {
      l.finished(1, 'success', FAST);
      fill(l, 1);
    }
    expect(l.limitOf(1)).toBe(32);
    expect(l.inFlightOf(1)).toBe(32);
    expect(l.canLaunch(1)).toBe(false);
  });

  it('gives each of n busy targets at most its share of the slots, ⌈slots / n⌉', () => {
    const l = limits({ concurrency: 10, maxPerTarget: 10 });
    // grow target 1 to the whole machine while it is alone
    fill(l, 1);
    for (let i = 0; i < 20; i++) {
      l.finished(1, 'success', FAST);
      fill(l, 1);
    }
    expect(l.limitOf(1)).toBe(10);
    // two more targets have work here (buffered): each may hold ⌈10 / 3⌉ = 4 in flight
    l.buffered(2, originOf(2));
    l.buffered(3, originOf(3));
    expect(l.canLaunch(1)).toBe(false); // 10 in flight, over its share now
    expect(l.canLaunch(2)).toBe(true);
    for (let i = 0; i < 6; i++) l.finished(1, 'success', FAST);
    expect(l.inFlightOf(1)).toBe(4);
    expect(l.canLaunch(1)).toBe(false);
    l.launched(2);
    l.launched(3);
    expect(fill(l, 2)).toBe(3);
    expect(l.inFlightOf(2)).toBe(4);
    // what a claim may take per target: twice its allowance, less what it holds
    expect(l.rooms()).toEqual(
      new Map([
        [1, 8 - 4],
        [2, 8 - 4],
        [3, 8 - 1],
      ]),
    );
    // an unknown target gets its initial limit within the share, twice over
    expect(l.defaultRoom()).toBe(8);
  });

  it('counts a target the last claim left work behind for as busy, though nothing of it is here', () => {
    const l = limits({ concurrency: 12 });
    fill(l, 1);
    expect(l.canLaunch(1)).toBe(false); // at its initial limit of 8
    l.setWaiting([2, 3]);
    expect(l.isWaiting(2)).toBe(true);
    expect(l.isWaiting(1)).toBe(false);
    // three targets share 12 slots: 4 each
    expect(l.rooms().get(1)).toBe(0);
    expect(l.defaultRoom()).toBe(8);
    for (let i = 0; i < 4; i++) l.finished(1, 'success', SLOW);
    expect(l.canLaunch(1)).toBe(false);
    l.finished(1, 'success', SLOW);
    expect(l.canLaunch(1)).toBe(true);
    // the next claim finds nothing left behind: target 1 may use its whole limit again
    l.setWaiting([]);
    expect(fill(l, 1)).toBe(5);
  });

  it('holds the endpoints of one host to DISPATCHER_MAX_PER_HOST, shared evenly among those with work', () => {
    for (const target of [11, 12, 13]) hosts.set(target, 'https://hooks.example');
    const l = limits({ concurrency: 32, maxPerTarget: 8, maxPerHost: 12 });
    // alone on its host, an endpoint is held by its own limit
    expect(fill(l, 11)).toBe(8);
    // a second endpoint of the host with work here: each may hold ⌈12 / 2⌉ = 6, the host 12
    l.buffered(12, originOf(12));
    expect(l.canLaunch(11)).toBe(false);
    expect(fill(l, 12)).toBe(4); // the host is full
    l.finished(11, 'success', SLOW);
    l.finished(11, 'success', SLOW);
    expect(l.canLaunch(11)).toBe(false); // 6 in flight: its part of the host
    expect(fill(l, 12)).toBe(2);
    l.finished(11, 'success', SLOW);
    expect(l.canLaunch(11)).toBe(true);
    // a third with work: ⌈12 / 3⌉ = 4 each, the host 12 in all
    l.buffered(13, originOf(13));
    expect(l.canLaunch(11)).toBe(false);
    expect(l.canLaunch(12)).toBe(false);
    expect(fill(l, 13)).toBe(1);
    // an endpoint of another host is not held by it
    expect(fill(l, 20)).toBe(8);
    // what a claim learns: what each endpoint holds, and the host's room (in flight and buffered)
    expect(
      l.held(
        new Map([
          [11, 0],
          [14, 0],
        ]),
      ),
    ).toEqual(
      new Map([
        [11, 5],
        [14, 0],
      ]),
    );
    expect(l.hostRoom()).toBe(24);
    expect(limits().hostRoom()).toBeUndefined();
  });

  it('tells the notified rows claim which endpoints have no room, and what it holds of each origin', () => {
    const l = limits({ concurrency: 4, maxPerTarget: 1 });
    hosts.set(31, 'https://shared.example');
    hosts.set(32, 'https://shared.example');
    // 31: one in flight and one buffered, twice its limit of one: no room
    launch(l, 31, 1);
    l.buffered(31, originOf(31));
    launch(l, 32, 1);
    launch(l, 33, 1);
    expect(l.notifiedRooms()).toEqual({
      fullTargets: [31],
      origins: ['https://shared.example', originOf(33)],
      originHeld: [3, 1],
    });
    l.finished(33, 'success', FAST);
    expect(l.notifiedRooms().origins).toEqual(['https://shared.example']);
  });
});
