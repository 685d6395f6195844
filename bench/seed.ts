import { enqueueEntityChange, notifyWebhookDue, type Knex } from '@platform/db';
import { type SecretBox } from '@platform/crypto';
import {
  benchEntity,
  seedParty as seedTestParty,
  seedRegistration as seedTestRegistration,
  type BenchRegistration,
} from '@platform/testkit';

export {
  benchEntity,
  ENTITY_BYTES,
  seedBacklog,
  seedGroupedBacklog,
  type BenchRegistration,
} from '@platform/testkit';

/** A Property Management Company party (only those use webhooks: docs/webhooks.md#who-may-call-them). */
export const seedParty = (knex: Knex): Promise<number> => seedTestParty(knex, 'Bench PMC');

/**
 * One registration of `partyId` for Property Updated, pointing at `targetUrl`, without target
 * authorization; its signing secret sealed with the key the dispatcher is given.
 */
export async function seedRegistration(
  knex: Knex,
  options: {
    partyId: number;
    targetUrl: string;
    shouldGroup: boolean;
    secrets: SecretBox;
    signingSecret: string;
  },
): Promise<BenchRegistration> {
  const { id, eventIds } = await seedTestRegistration(knex, {
    ...options,
    events: [{ entityName: 'Property', type: 2 }],
  });
  return { partyId: options.partyId, registrationId: id, eventId: eventIds[0]! };
}

/**
 * Writes `changesPerGroup` changes to each of `groups` entities (ids 1…groups) through the real
 * enqueue statement, as the API's write path does (a NOTIFY last in every transaction). Each
 * entity's first half of changes is written in ONE transaction (the case that breaks queues
 * ordering by a timestamp), the rest one per transaction. `writers` connections write at once,
 * each owning a share of the entities and interleaving them, so commits of different groups mix;
 * one entity is only ever written by one writer, so its `seq` order is its commit order.
 * Returns the number of webhooks created.
 */
export async function writeGroupedChanges(
  knex: Knex,
  options: {
    partyId: number;
    groups: number;
    changesPerGroup: number;
    /** seq of each entity's first change in this round. */
    firstSeq: number;
    writers: number;
  },
): Promise<number> {
  const { partyId, groups, changesPerGroup, firstSeq, writers } = options;
  const burst = Math.ceil(changesPerGroup / 2);
  // per entity: one transaction of `burst` changes, then single-change transactions
  const steps: number[] = [burst, ...Array.from({ length: changesPerGroup - burst }, () => 1)];
  const at = new Date().toISOString();
  let created = 0;
  const writer = async (index: number) => {
    const entities = Array.from({ length: groups }, (_, i) => i + 1).filter((id) => id % writers === index);
    const written = new Map<number, number>(entities.map((id) => [id, 0]));
    for (const size of steps) {
      for (const entityId of entities) {
        await knex.transaction(async (trx) => {
          for (let k = 0; k < size; k++) {
            const seq = firstSeq + written.get(entityId)!;
            written.set(entityId, written.get(entityId)! + 1);
            // awaited first: `created += await …` would read `created` before the other writers add to it
            const webhooks = await enqueueEntityChange(trx, {
              entityName: 'Property',
              type: 2,
              entityId,
              entity: benchEntity(entityId, seq, partyId, at),
              initiatorPartyId: partyId,
              initiatorAccountId: null,
            });
            created += webhooks;
          }
          await notifyWebhookDue(trx);
        });
      }
    }
  };
  await Promise.all(Array.from({ length: writers }, (_, index) => writer(index)));
  return created;
}
