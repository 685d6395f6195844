import type { Knex } from 'knex';
import { seedParty } from '@platform/testkit';
import { claimWebhooks, type Claim, type ClaimedWebhook } from '../src/queue/claim';
import { enqueueEntityChange, type EntityChangeInput } from '../src/queue/enqueue';
import { WEBHOOK_DUE_CHANNEL } from '../src/notify';
import { partyBucket, registrationEventRows } from '../src/buckets';

// the results the queue tests record, shared with the dispatcher's (in the test kit)
export { attemptResult, TEST_HEALTH_POLICY } from '@platform/testkit';

/** An update of Unit `entityId` by `partyId`: the change the queue tests enqueue. */
export const unitChange = (partyId: number, entityId: number): EntityChangeInput => ({
  entityName: 'Unit',
  type: 2,
  entityId,
  entity: { id: entityId },
  initiatorPartyId: partyId,
  initiatorAccountId: null,
});

/** A claim as a dispatcher holding nothing sends it: every target's room is `room` (default: the batch). */
export async function claim(
  knex: Knex,
  options: { batch: number; leaseMs: number; dispatcherId: string; room?: number; buckets?: number[] },
): Promise<ClaimedWebhook[]> {
  const claimed = await claimWebhooks(knex, {
    ...options,
    rooms: new Map(),
    defaultRoom: options.room ?? options.batch,
  });
  return claimed.leased;
}

/** A registration of a party of its own (so a change fans out to it alone), subscribed to Unit updates. */
export async function ownRegistration(
  knex: Knex,
  targetUrl: string,
  options: { shouldGroup?: boolean; shouldGroupContinueAfterFail?: boolean; partyId?: number } = {},
): Promise<{ id: number; partyId: number; targetId: number }> {
  const partyId = options.partyId ?? (await seedParty(knex));
  const [row] = (await knex('webhook_registrations')
    .insert({
      party_id: partyId,
      bucket: partyBucket(knex, partyId),
      target_url: targetUrl,
      should_group: options.shouldGroup ?? false,
      should_group_continue_after_fail: options.shouldGroupContinueAfterFail ?? false,
      signing_secret: 'sealed',
    })
    .returning(['id', 'target_id', 'bucket'])) as { id: number; target_id: number; bucket: number }[];
  await knex('webhook_events').insert(registrationEventRows(row!, [{ entity_name: 'Unit', type: 2 }]));
  return { id: row!.id, partyId, targetId: row!.target_id };
}

/**
 * `count` changes of `registration`'s party in one transaction, of entities 1…count (or all of
 * `entityId`: one group); answers the registration's webhook ids, oldest first.
 */
export async function backlog(
  knex: Knex,
  registration: { id: number; partyId: number },
  count: number,
  entityId?: number,
): Promise<number[]> {
  return knex.transaction(async (trx) => {
    for (let i = 1; i <= count; i++)
      await enqueueEntityChange(trx, unitChange(registration.partyId, entityId ?? i));
    return (
      (await trx('webhooks')
        .where({ registration_id: registration.id })
        .orderBy('id')
        .pluck('id')) as number[]
    ).map(Number);
  });
}

/**
 * A claim as dispatcher `dispatcherId` (default `d1`) sends it: `rooms` for endpoints it holds
 * (`held` of each), `defaultRoom` (the batch) for others, `hostRoom` per origin (none: no cap).
 */
export function claimAs(
  knex: Knex,
  options: {
    batch: number;
    rooms?: [number, number][];
    held?: [number, number][];
    defaultRoom?: number;
    hostRoom?: number;
    dispatcherId?: string;
    /** The round-robin cursor: the previous claim's `cursor` (none: from the lowest id). */
    after?: number;
  },
): Promise<Claim> {
  return claimWebhooks(knex, {
    batch: options.batch,
    leaseMs: 60_000,
    dispatcherId: options.dispatcherId ?? 'd1',
    rooms: new Map(options.rooms ?? []),
    held: new Map(options.held ?? []),
    defaultRoom: options.defaultRoom ?? options.batch,
    hostRoom: options.hostRoom,
    after: options.after,
  });
}

/** Sets a target's breaker; `openForSeconds` / `trialForSeconds` from now (negative: passed). */
export async function setBreaker(
  knex: Knex,
  targetId: number,
  state: 'open' | 'half-open' | 'closed',
  options: { openForSeconds?: number; trialForSeconds?: number; opens?: number } = {},
): Promise<void> {
  const fromNow = (seconds: number | undefined) =>
    seconds === undefined ? null : knex.raw(`now() + make_interval(secs => ?)`, [seconds]);
  await knex('webhook_targets')
    .where({ id: targetId })
    .update({
      breaker_state: state,
      open_until: fromNow(options.openForSeconds),
      trial_until: fromNow(options.trialForSeconds),
      ...(options.opens !== undefined && { opens: options.opens }),
    });
}

/**
 * LISTENs for the dispatchers' wake-up on a connection of its own. `settle()` answers the
 * payloads of the notifications that arrived since the last call ('' for a plain wake-up); `close()` gives the connection back.
 */
export async function listenForWakeUps(
  knex: Knex,
): Promise<{ settle(): Promise<string[]>; close(): Promise<void> }> {
  const client = (await knex.client.acquireConnection()) as {
    query(sql: string): Promise<unknown>;
    on(event: 'notification', listener: (message: { payload?: string }) => void): void;
    removeAllListeners(event: string): void;
  };
  const seen: string[] = [];
  client.on('notification', (n) => seen.push(n.payload ?? ''));
  await client.query(`listen ${WEBHOOK_DUE_CHANNEL}`);
  return {
    settle: async () => {
      await client.query('select 1'); // notifications arrive before the answer to a later query
      return seen.splice(0);
    },
    close: async () => {
      await client.query('unlisten *');
      client.removeAllListeners('notification');
      await knex.client.releaseConnection(client);
    },
  };
}
