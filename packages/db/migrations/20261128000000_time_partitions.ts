import type { Knex } from 'knex';
import { TIME_PARTITION_START_FUNCTION } from '../src/queue/functions/time-partition-start';
import { TIME_PARTITIONS_ENSURE_FUNCTION } from '../src/queue/functions/time-partitions-ensure';

/**
 * Time partitioning (docs/decisions.md › Time partitioning): `entity_changes` and
 * `webhook_attempts` become tables partitioned by range of their bigint `id`, one partition per
 * UTC day, so retention drops whole partitions instead of deleting rows.
 *
 * - The id layout places each day's partition at a fixed id: day d (days since 1970-01-01)
 *   holds ids [d × 10^10, (d + 1) × 10^10). `time_partitions_ensure`
 *   (`packages/db/src/queue/functions/time-partitions-ensure.ts`) creates the partitions of a
 *   day and the days after it, and moves the table's id sequence forward to the start of that
 *   day's range, so the rows written from then on land in that day's partition. Until the next
 *   move the sequence stays in the range it is in: a write never needs a partition that was not
 *   created (10^10 ids a day is 115,000 a second for a whole day), whatever its date.
 * - A partition is created as a plain table (`like ... including all`) and then attached, which
 *   takes SHARE UPDATE EXCLUSIVE on the parent (reads and writes go on) rather than the ACCESS
 *   EXCLUSIVE of `create table ... partition of`.
 * - The existing rows stay where they are: the old table becomes the partition `<table>_initial`
 *   of ids below the first unused id; the sequence then moves to today's range.
 * - `webhooks.entity_change_id` keeps its foreign key, now to the partitioned table: a partition
 *   a webhook still references cannot be detached. `webhook_attempts.webhook_id` loses its
 *   foreign key: with it, attaching, detaching and dropping an attempts partition each lock
 *   `webhooks`, the queue's hottest table (the drop of a detached partition takes ACCESS
 *   EXCLUSIVE on it), and its `on delete cascade` probed every partition for each pruned webhook.
 *   Attempts are only written by `webhooks_complete` for the webhooks it has just updated; those
 *   of a pruned webhook go with their partition.
 */
export async function up(knex: Knex): Promise<void> {
  // the partitioning below calls them, so they are written now (and again after every migrate)
  await knex.raw(TIME_PARTITION_START_FUNCTION);
  await knex.raw(TIME_PARTITIONS_ENSURE_FUNCTION);
  const { rows } = await knex.raw<{ rows: { today: string }[] }>(
    `select to_char((now() at time zone 'UTC')::date, 'YYYY-MM-DD') as today`,
  );
  const today = rows[0]!.today;

  // the foreign keys that point at or from the old tables go first; webhooks' comes back below
  await knex.raw(`
    alter table webhook_attempts drop constraint webhook_attempts_webhook_id_fkey;
    alter table webhooks drop constraint webhooks_entity_change_id_fkey;
  `);
  await partition(knex, 'entity_changes', today, {
    indexes: {
      entity_changes_entity: '(entity_name, entity_id)',
      entity_changes_party_created: '(initiator_party_id, created)',
    },
  });
  await partition(knex, 'webhook_attempts', today, {
    indexes: {
      webhook_attempts_created: '(created)',
      webhook_attempts_webhook_latest: '(webhook_id, id desc)',
    },
  });
  await knex.raw(`
    alter table webhooks add constraint webhooks_entity_change_id_fkey
      foreign key (entity_change_id) references entity_changes (id);
  `);
}

/**
 * Makes `table` a table partitioned by range of `id` whose first partition is the old table
 * (`<table>_initial`, ids below the first one not handed out), with today's partition and the
 * two after it, and the sequence moved to today's range.
 */
async function partition(
  knex: Knex,
  table: string,
  today: string,
  options: { indexes: Record<string, string> },
): Promise<void> {
  const initial = `${table}_initial`;
  await knex.raw(`alter table ?? rename to ??`, [table, initial]);
  await knex.raw(`alter index ?? rename to ??`, [`${table}_pkey`, `${initial}_pkey`]);
  for (const index of Object.keys(options.indexes)) {
    await knex.raw(`alter index ?? rename to ??`, [index, index.replace(table, initial)]);
  }
  // the columns, their defaults (the id sequence) and check constraints
  await knex.raw(
    `create table ?? (like ?? including defaults including constraints) partition by range (id)`,
    [table, initial],
  );
  await knex.raw(`alter table ?? add constraint ?? primary key (id)`, [table, `${table}_pkey`]);
  for (const [index, columns] of Object.entries(options.indexes)) {
    await knex.raw(`create index ?? on ?? ${columns}`, [index, table]);
  }
  // the sequence belongs to the partitioned table: dropping the first partition must not drop it
  await knex.raw(`alter sequence ?? owned by ??`, [`${table}_id_seq`, `${table}.id`]);
  const { rows } = await knex.raw<{ rows: { bound: string }[] }>(
    `select greatest((select max(id) from ??), (select last_value from ??)) + 1 as bound`,
    [initial, `${table}_id_seq`],
  );
  // the old table's indexes match the new ones and are attached to them, not built again
  await knex.raw(
    `alter table ?? attach partition ?? for values from (minvalue) to (${Number(rows[0]!.bound)})`,
    [table, initial],
  );
  await knex.raw(`select time_partitions_ensure(?, ?::date, 2)`, [table, today]);
}
