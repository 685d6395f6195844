import { WebhookState } from '@platform/shared';

export interface GroupProgress {
  /** Waiting behind the head (Pending). */
  waiting: number;
  /** The head being delivered (Created or Retrying). */
  inDelivery: number;
  delivered: number;
  /** Ended by an operator (Aborted or Resolved). */
  ended: number;
  /** A webhook after the released blocker that failed and now holds the group again. */
  newBlockerId?: number;
  /** Nothing waits or is in delivery any more. */
  drained: boolean;
  /** Nothing will change without an operator: drained, or held again. */
  settled: boolean;
}

/**
 * Where a group stands after its blocker `releasedBlockerId` was resolved or aborted, from its
 * webhooks: how many still wait, are in delivery, were delivered or ended, and whether a later
 * webhook failed and holds it again.
 */
export function groupProgress(
  webhooks: readonly { id: number; state: number }[],
  releasedBlockerId: number,
): GroupProgress {
  const count = (...states: number[]) => webhooks.filter((w) => states.includes(w.state)).length;
  const waiting = count(WebhookState.Pending);
  const inDelivery = count(WebhookState.Created, WebhookState.Retrying);
  const newBlockerId = webhooks
    .filter((w) => w.state === WebhookState.Failed && w.id > releasedBlockerId)
    .reduce<number | undefined>((max, w) => (max === undefined || w.id > max ? w.id : max), undefined);
  const drained = waiting === 0 && inDelivery === 0;
  return {
    waiting,
    inDelivery,
    delivered: count(WebhookState.Successful),
    ended: count(WebhookState.Aborted, WebhookState.Resolved),
    newBlockerId,
    drained,
    settled: inDelivery === 0 && (waiting === 0 || newBlockerId !== undefined),
  };
}
