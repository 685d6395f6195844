import type { Knex } from '@platform/db';
import { WebhookState } from '@platform/shared';

/**
 * Large queues written set-based, for benchmarks and for tests that need many webhooks (bulk
 * operations): the queue as a burst of writes would leave it, without writing it change by change.
 */

/** Size of the JSON of one seeded entity: the "~1 KB bodies" of the workload. */
export const ENTITY_BYTES = 1024;

/** What a benchmark registration consists of. */
export interface BenchRegistration {
  partyId: number;
  registrationId: number;
  eventId: number;
}

/** A Property-shaped entity whose `notes` start with `seq=N;` and pad the JSON to ENTITY_BYTES. */
export function benchEntity(id: number, seq: number, partyId: number, at: string): Record<string, unknown> {
  const entity = {
    id,
    created: at,
    lastModified: at,
    deleted: null,
    partyId,
    name: `Bench property ${id}`,
    street: 'Benchmarkstraße',
    houseNumber: String(id % 200),
    postalCode: '10115',
    city: 'Berlin',
    country: 'DE',
    propertyType: 'residential',
    yearBuilt: 1990,
    notes: `seq=${seq};`,
  };
  const pad = Math.max(0, ENTITY_BYTES - Buffer.byteLength(JSON.stringify(entity)));
  return { ...entity, notes: `${entity.notes}${'x'.repeat(pad)}` };
}

/**
 * `count` ungrouped Created webhooks due now, with their entity changes, in two set-based
 * statements: the queue as a burst of writes would leave it, without the cost of writing it
 * through the API. The entities are built in SQL to the shape and size of `benchEntity`.
 */
export async function seedBacklog(knex: Knex, registration: BenchRegistration, count: number): Promise<void> {
  const at = new Date().toISOString();
  // the notes padding that makes a 5-digit id's entity ENTITY_BYTES long; others differ by a byte or two
  const sample = benchEntity(10_000, 10_000, registration.partyId, at);
  const pad = (sample.notes as string).length - 'seq=10000;'.length;
  await knex.raw(
    `insert into entity_changes (entity_name, type, entity_id, entity, initiator_party_id, initiator_account_id)
     select 'Property', 2, i,
            jsonb_build_object(
              'id', i, 'created', :at::text, 'lastModified', :at::text, 'deleted', null,
              'partyId', :partyId::int, 'name', 'Bench property ' || i, 'street', 'Benchmarkstraße',
              'houseNumber', (i % 200)::text, 'postalCode', '10115', 'city', 'Berlin', 'country', 'DE',
              'propertyType', 'residential', 'yearBuilt', 1990,
              'notes', 'seq=' || i || ';' || repeat('x', :pad::int)),
            :partyId::int, null
       from generate_series(1, :count::int) as i`,
    { at, partyId: registration.partyId, pad, count },
  );
  await knex.raw(
    `insert into webhooks (registration_id, bucket, event_id, entity_change_id, state, next_attempt_at)
     select :registrationId::int, (select bucket from webhook_registrations where id = :registrationId::int),
            :eventId::int, id, ${WebhookState.Created}, now()
       from entity_changes order by id`,
    { registrationId: registration.registrationId, eventId: registration.eventId },
  );
  await knex.raw('analyze entity_changes, webhooks');
}

/**
 * As `seedBacklog`, but for a grouped registration: `groups` entities with `perGroup` changes
 * each, as the enqueue statement would leave them had they been written one by one: per group
 * a `webhook_groups` row counting them, its first webhook the head (Created, due now) and the
 * rest Pending in `group_seq` order.
 */
export async function seedGroupedBacklog(
  knex: Knex,
  registration: BenchRegistration,
  groups: number,
  perGroup: number,
): Promise<void> {
  await seedBacklog(knex, registration, groups * perGroup);
  // change i belongs to entity (i - 1) % groups + 1, as the (i - 1) / groups + 1-th of its group
  await knex.raw(
    `with grouped as (
       select w.id, 'Property:' || ((c.entity_id - 1) % :groups + 1) as group_key, (c.entity_id - 1) / :groups + 1 as seq
         from webhooks w join entity_changes c on c.id = w.entity_change_id
     )
     update webhooks w
        set group_key = g.group_key, group_seq = g.seq, state = case when g.seq = 1 then ${WebhookState.Created} else ${WebhookState.Pending} end
       from grouped g
      where g.id = w.id`,
    { groups },
  );
  await knex.raw(
    `insert into webhook_groups (registration_id, bucket, group_key, next_seq, open_count)
     select :registrationId::int, (select bucket from webhook_registrations where id = :registrationId::int),
            group_key, max(group_seq), count(*)
       from webhooks group by group_key`,
    { registrationId: registration.registrationId },
  );
  await knex.raw('analyze webhooks, webhook_groups');
}
