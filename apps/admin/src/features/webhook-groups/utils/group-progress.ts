import type { WebhookGroupProgressRead } from '@platform/shared';

export interface GroupProgress {
  /** Waiting behind the head (Pending). */
  waiting: number;
  /** Due or being delivered: Created, or Retrying that is due or held by a dispatcher. */
  inDelivery: number;
  /** Retrying with the next attempt scheduled later (not in delivery now). */
  retrying: number;
  /** The earliest scheduled next attempt of those Retrying. */
  nextRetryAt?: string;
  /** Delivered from the released blocker on. */
  delivered: number;
  /** Ended by an operator (Aborted or Resolved), from the released blocker on. */
  ended: number;
  /** A webhook that failed (again) and now holds the group again. */
  newBlockerId?: number;
  /** Nothing waits, is in delivery or will be retried any more. */
  drained: boolean;
  /** Nothing will change without an operator: drained, or held again. */
  settled: boolean;
}

/**
 * Where a group stands after its blocker was resolved, aborted or retried, from the API's exact
 * counts over the whole group (`GET /api/webhook-groups/progress`): held again as soon as a
 * Failed webhook holds it (however many wait behind it), drained once nothing waits, is in
 * delivery or will be retried.
 */
export function groupProgress(read: WebhookGroupProgressRead): GroupProgress {
  const { waiting, inDelivery, retrying, delivered, ended } = read;
  const newBlockerId = read.heldBy ?? undefined;
  const drained = waiting === 0 && inDelivery === 0 && retrying === 0;
  return {
    waiting,
    inDelivery,
    retrying,
    nextRetryAt: read.nextRetryAt ?? undefined,
    delivered,
    ended,
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
