import { bodyOf, startTestTarget, type TargetAnswer } from '@platform/testkit';

/** How a path of the chaos target answers (besides the webhooks of `neverAnswers2xx`). */
export const BEHAVIOURS = {
  /** 200 after a few milliseconds. */
  ok: { fail: 0, hang: 0, reset: 0 },
  /** 500 for one request in five. */
  flaky: { fail: 0.2, hang: 0, reset: 0 },
  /** Never answers one request in ten (the dispatcher's timeout ends it). */
  hang: { fail: 0, hang: 0.1, reset: 0 },
  /** Drops the connection without answering one request in ten. */
  reset: { fail: 0, hang: 0, reset: 0.1 },
} as const;

export type Behaviour = keyof typeof BEHAVIOURS;

/**
 * Random failures a webhook gets at most; after them the target answers it 200. So chance alone
 * (seven 500s in a row on `flaky` is one webhook in 78,000) never exhausts the seven tries, and
 * the webhooks that must end Failed are exactly those of `neverAnswers2xx`. Three leave room for
 * the tries a kill or the outage costs.
 */
const MAX_RANDOM_FAILURES = 3;

/**
 * The webhooks the target never answers 2xx: they must end Failed after the whole retry
 * schedule, and they are the only ones that may. Every change of every twentieth entity on the
 * ungrouped `flaky` (always 500), and change 3 of every tenth entity on the grouped `reset`
 * (always dropped), so a Failed head must let its group go on (continue-after-fail).
 */
export function neverAnswers2xx(behaviour: Behaviour, entityId: number, seq: number): boolean {
  if (behaviour === 'flaky') return entityId % 20 === 0;
  if (behaviour === 'reset') return entityId % 10 === 5 && seq === 3;
  return false;
}

/** One request the target received, with what it answered. */
export interface Delivery {
  webhookId: number;
  behaviour: Behaviour;
  /** The changed entity's id and its per-entity sequence number, from the body. */
  entityId: number;
  seq: number;
  receivedAt: number;
  /** 200 or 500; null when the target hung or reset instead. */
  status: number | null;
}

export interface ChaosTarget {
  url(behaviour: Behaviour): string;
  /** Every request, in the order the target received them. */
  readonly deliveries: Delivery[];
  close(): Promise<void>;
}

/**
 * A recording webhook target on 127.0.0.1 (the kit's, scripted): `/<behaviour>` answers as
 * BEHAVIOURS and `neverAnswers2xx` say, and every request is recorded with the entity and sequence
 * number its body carries, so the suite can count losses, duplicates and ordering violations as a
 * receiver sees them.
 */
export async function startChaosTarget(random: () => number): Promise<ChaosTarget> {
  const deliveries: Delivery[] = [];
  const randomFailures = new Map<number, number>();
  const target = await startTestTarget((request): TargetAnswer => {
    const behaviour = request.path.slice(1) as Behaviour;
    const webhookId = Number(request.webhookId);
    const odds = BEHAVIOURS[behaviour];
    const { id: entityId, seq } = bodyOf<{ entity: { id: number; seq: number } }>(request).entity;
    let answer: 200 | 500 | 'hang' | 'reset';
    if (neverAnswers2xx(behaviour, entityId, seq)) {
      answer = behaviour === 'reset' ? 'reset' : 500;
    } else if ((randomFailures.get(webhookId) ?? 0) >= MAX_RANDOM_FAILURES) {
      answer = 200;
    } else {
      const roll = random();
      answer =
        roll < odds.hang ? 'hang' : roll < odds.hang + odds.reset ? 'reset' : roll < odds.fail ? 500 : 200;
      if (answer !== 200) randomFailures.set(webhookId, (randomFailures.get(webhookId) ?? 0) + 1);
    }
    deliveries.push({
      webhookId,
      behaviour,
      entityId,
      seq,
      receivedAt: request.receivedAt,
      status: typeof answer === 'number' ? answer : null,
    });
    if (answer === 'reset') return { reset: true };
    // the dispatcher's timeout ends it
    if (answer === 'hang') return { hang: true };
    return { status: answer, body: '', delayMs: 2 + random() * 8 };
  });
  return {
    url: (behaviour) => `${target.origin}/${behaviour}`,
    deliveries,
    close: () => target.close(),
  };
}
