import { WebhookState } from '@platform/shared';

export interface GroupProgress {
  /** Waiting behind the head (Pending). */
  waiting: number;
  /** Due or being delivered: Created, or Retrying whose next attempt is due. */
  inDelivery: number;
  /** Retrying with the next attempt scheduled later (not in delivery now). */
  retrying: number;
  /** The earliest scheduled next attempt of those Retrying. */
  nextRetryAt?: string;
  delivered: number;
  /** Ended by an operator (Aborted or Resolved). */
  ended: number;
  /** A webhook that failed (again) and now holds the group again. */
  newBlockerId?: number;
  /** Nothing waits, is in delivery or will be retried any more. */
  drained: boolean;
  /** Nothing will change without an operator: drained, or held again. */
  settled: boolean;
}

/**
 * Where a group stands after its blocker `releasedBlockerId` was resolved, aborted or retried
 * (`blockerRetried`: the blocker is tried again, so its failing again holds the group again),
 * from its webhooks at `now`: how many still wait, are in delivery, wait for a later retry, were
 * delivered or ended, and whether a webhook failed and holds it again.
 */
export function groupProgress(
  webhooks: readonly { id: number; state: number; nextAttemptAt?: string | null }[],
  releasedBlockerId: number,
  now: number = Date.now(),
  blockerRetried = false,
): GroupProgress {
  const count = (...states: number[]) => webhooks.filter((w) => states.includes(w.state)).length;
  const scheduledLater = (w: { state: number; nextAttemptAt?: string | null }) =>
    w.state === WebhookState.Retrying && Boolean(w.nextAttemptAt) && Date.parse(w.nextAttemptAt!) > now;
  const later = webhooks.filter(scheduledLater);
  const waiting = count(WebhookState.Pending);
  const inDelivery = count(WebhookState.Created, WebhookState.Retrying) - later.length;
  const retrying = later.length;
  const nextRetryAt = later
    .map((w) => w.nextAttemptAt!)
    .reduce<string | undefined>(
      (min, at) => (min === undefined || Date.parse(at) < Date.parse(min) ? at : min),
      undefined,
    );
  const newBlockerId = webhooks
    .filter(
      (w) =>
        w.state === WebhookState.Failed &&
        (w.id > releasedBlockerId || (blockerRetried && w.id === releasedBlockerId)),
    )
    .reduce<number | undefined>((max, w) => (max === undefined || w.id > max ? w.id : max), undefined);
  const drained = waiting === 0 && inDelivery === 0 && retrying === 0;
  return {
    waiting,
    inDelivery,
    retrying,
    nextRetryAt,
    delivered: count(WebhookState.Successful),
    ended: count(WebhookState.Aborted, WebhookState.Resolved),
    newBlockerId,
    drained,
    settled: inDelivery === 0 && retrying === 0 && (waiting === 0 || newBlockerId !== undefined),
  };
}

/** How often a draining group is read: often while something is due, slowly while only a retry waits. */
export function groupRefreshMs(progress: GroupProgress): number | false {
  if (progress.settled) return false;
  return progress.inDelivery === 0 && progress.retrying > 0 ? 10_000 : 2000;
}
