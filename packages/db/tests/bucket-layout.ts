import type { Knex } from 'knex';
import { SHARED_BUCKETS } from '../src/buckets';

/**
 * The Citus emulation's layout (docs/scaling.md › How this is proven): a migrated database's queue
 * tables rebuilt hash-partitioned by their tenant `bucket`, the partitions standing for Citus's
 * shards. Postgres applies Citus's rule for the distribution column: every primary key and unique
 * constraint must include the partition key, so each gains `bucket`, and so does each foreign key
 * between these tables (Citus: only between colocated tables including the distribution column).
 * Built from the real migrations, not from a schema of its own: read from the catalog, each
 * table's columns (its `bucket` among them, which the real writes set: ../src/buckets.ts), checks,
 * keys and indexes are re-made as they are, the keys with `bucket` first and `bucket` made
 * `NOT NULL`, so a write that does not carry it fails here. Keys into these tables from tables not
 * rebuilt (`operator_actions`, `webhook_operations`, `webhook_attempt_stats`) are dropped, as
 * docs/scaling.md › Where every table goes says; the triggers of `webhook_registrations` are
 * re-made on the partitioned table (R8's step removes them). Rows written before the layout was built without a bucket (test
 * seeds, old rows) get their tenant's, as the backfill of the migration path would.
 */

/** The tables rebuilt, referenced before referencing, with how a row without a bucket finds it. */
export const BUCKET_TABLES: readonly { table: string; bucket: string }[] = [
  { table: 'webhook_targets', bucket: '(select p.bucket from parties p where p.id = f.party_id)' },
  { table: 'webhook_registrations', bucket: '(select p.bucket from parties p where p.id = f.party_id)' },
  {
    table: 'webhook_events',
    bucket: '(select bucket from webhook_registrations_flat r where r.id = f.registration_id)',
  },
  {
    table: 'webhook_groups',
    bucket: '(select bucket from webhook_registrations_flat r where r.id = f.registration_id)',
  },
  {
    table: 'webhooks',
    bucket: '(select bucket from webhook_registrations_flat r where r.id = f.registration_id)',
  },
];

export interface BucketLayoutOptions {
  /** Hash partitions per table (Citus: shards of the colocation group). */
  partitions: number;
}

const inSet = (table: string) => BUCKET_TABLES.some((t) => t.table === table);

/** A key's column list with `bucket` first: `PRIMARY KEY (id)` → `PRIMARY KEY (bucket, id)`. */
export function withBucket(definition: string): string {
  return definition.replace(/(PRIMARY KEY|UNIQUE|USING btree) \(/, '$1 (bucket, ');
}

/** Rebuilds the queue tables of `knex`'s database partitioned by bucket (see above). */
export async function buildBucketLayout(knex: Knex, options: BucketLayoutOptions): Promise<void> {
  await knex.transaction(async (trx) => {
    // the directory complete: parties written without a bucket get their tenant's (the migration's rule)
    await trx.raw(
      `update parties set bucket = coalesce(managed_by_party_id, id) % ${SHARED_BUCKETS} where bucket is null`,
    );
    const names = BUCKET_TABLES.map((t) => t.table);
    // every foreign key that points into the rebuilt tables, from anywhere
    const { rows: incoming } = await trx.raw<{
      rows: { source: string; name: string; definition: string }[];
    }>(
      `select conrelid::regclass::text as source, conname as name, pg_get_constraintdef(oid) as definition
         from pg_constraint where contype = 'f' and conparentid = 0 and confrelid::regclass::text = any(?)`,
      [names],
    );
    for (const fk of incoming) await trx.raw(`alter table ?? drop constraint ??`, [fk.source, fk.name]);
    const keys: { table: string; name: string; definition: string }[] = [];
    const indexes: string[] = [];
    const triggers: string[] = [];
    for (const { table } of BUCKET_TABLES) {
      const { rows: constraints } = await trx.raw<{
        rows: { name: string; type: string; definition: string }[];
      }>(
        `select conname as name, contype as type, pg_get_constraintdef(oid) as definition
           from pg_constraint where conrelid = ?::regclass and conparentid = 0 and contype in ('p', 'u', 'f')`,
        [table],
      );
      for (const c of constraints) keys.push({ table, name: c.name, definition: c.definition });
      const { rows: plain } = await trx.raw<{ rows: { name: string; definition: string }[] }>(
        `select i.indexrelid::regclass::text as name, pg_get_indexdef(i.indexrelid) as definition from pg_index i
          where i.indrelid = ?::regclass
            and not exists (select 1 from pg_constraint c where c.conindid = i.indexrelid)`,
        [table],
      );
      indexes.push(...plain.map((p) => p.definition));
      const { rows: triggerRows } = await trx.raw<{ rows: { definition: string }[] }>(
        `select pg_get_triggerdef(oid) as definition from pg_trigger where tgrelid = ?::regclass and not tgisinternal`,
        [table],
      );
      triggers.push(...triggerRows.map((t) => t.definition));
      for (const p of plain) await trx.raw(`drop index ??`, [p.name]);
      for (const c of constraints)
        await trx.raw(`alter table ?? drop constraint if exists ??`, [table, c.name]);
      await trx.raw(`alter table ?? rename to ??`, [table, `${table}_flat`]);
      await trx.raw(
        `create table ?? (like ?? including defaults including constraints including generated)
           partition by hash (bucket)`,
        [table, `${table}_flat`],
      );
      await trx.raw(`alter table ?? alter column bucket set not null`, [table]);
      for (let r = 0; r < options.partitions; r++) {
        await trx.raw(
          `create table ?? partition of ?? for values with (modulus ${options.partitions}, remainder ${r})`,
          [`${table}_b${r}`, table],
        );
      }
      // the sequences the ids come from stay: owned by the new table
      const { rows: sequences } = await trx.raw<{ rows: { sequence: string; column: string }[] }>(
        `select s.seq::text as sequence, a.attname as column
           from pg_attribute a, pg_get_serial_sequence(?, a.attname) s(seq)
          where a.attrelid = ?::regclass and a.attnum > 0 and s.seq is not null`,
        [`${table}_flat`, `${table}_flat`],
      );
      for (const s of sequences)
        await trx.raw(`alter sequence ${s.sequence} owned by ??.??`, [table, s.column]);
    }
    for (const { table, bucket } of BUCKET_TABLES) {
      const flat = `${table}_flat`;
      await trx.raw(`update ?? f set bucket = ${bucket} where f.bucket is null`, [flat]);
      await trx.raw(`insert into ?? select * from ??`, [table, flat]);
    }
    for (const key of keys) {
      const references = /REFERENCES (\w+)\(/.exec(key.definition)?.[1];
      if (references === undefined) {
        await trx.raw(`alter table ?? add constraint ?? ${withBucket(key.definition)}`, [
          key.table,
          key.name,
        ]);
      }
    }
    for (const key of keys) {
      const references = /REFERENCES (\w+)\(/.exec(key.definition)?.[1];
      if (references === undefined) continue;
      const definition = inSet(references)
        ? key.definition
            .replace(/FOREIGN KEY \(/, 'FOREIGN KEY (bucket, ')
            .replace(/REFERENCES (\w+)\(/, 'REFERENCES $1(bucket, ')
        : key.definition;
      await trx.raw(`alter table ?? add constraint ?? ${definition}`, [key.table, key.name]);
    }
    // incoming keys from the tables that stay are re-made only among the rebuilt ones (above)
    for (const index of indexes) {
      await trx.raw(index.replace(/ ON public\.(\w+) /, ' ON $1 '));
    }
    for (const trigger of triggers) await trx.raw(trigger.replace(/ ON public\.(\w+) /, ' ON $1 '));
    for (const { table } of [...BUCKET_TABLES].reverse())
      await trx.raw(`drop table ?? cascade`, [`${table}_flat`]);
  });
}

/** The partition number of `table` (of `partitions`) that rows of `bucket` go to. */
export async function bucketPartition(
  knex: Knex,
  table: string,
  partitions: number,
  bucket: number,
): Promise<number> {
  const { rows } = await knex.raw<{ rows: { partition: number }[] }>(
    `select r as partition from generate_series(0, ${partitions - 1}) r
      where satisfies_hash_partition(?::regclass, ${partitions}, r, ?::int)`,
    [table, bucket],
  );
  return rows[0]!.partition;
}

/** Which of a tenant's rows a table holds: by its party, or by its registration's. */
const OWNED_BY: Record<string, string> = {
  webhook_targets: 'party_id = :party',
  webhook_registrations: 'party_id = :party',
  webhook_events: 'registration_id in (select id from webhook_registrations where party_id = :party)',
  webhook_groups: 'registration_id in (select id from webhook_registrations where party_id = :party)',
  webhooks: 'registration_id in (select id from webhook_registrations where party_id = :party)',
};

/**
 * Moves tenant `party` to bucket `to` (docs/scaling.md › Moving a tenant to another bucket, steps 3
 * and 4, with the writes already frozen and nothing leased): in one transaction, copies its rows of
 * every table into the new bucket as they are (ids, states, `next_seq`, `group_seq`, leases),
 * referenced tables first, then deletes the old ones, referencing tables first, and points the
 * directory (`parties.bucket` of the tenant and of the parties it manages) at the new bucket, so
 * the writes after it land there. A copy and a delete, not an update of the bucket: Citus does not
 * let an `UPDATE` change the distribution column.
 */
export async function moveTenant(knex: Knex, party: number, to: number): Promise<void> {
  await knex.transaction(async (trx) => {
    await trx.raw(`update parties set bucket = ? where id = ? or managed_by_party_id = ?`, [
      to,
      party,
      party,
    ]);
    for (const { table } of BUCKET_TABLES) {
      const { rows } = await trx.raw<{ rows: { column: string }[] }>(
        `select attname as column from pg_attribute
          where attrelid = ?::regclass and attnum > 0 and not attisdropped and attname <> 'bucket' order by attnum`,
        [table],
      );
      const columns = rows.map((r) => `"${r.column}"`).join(', ');
      await trx.raw(
        `insert into ${table} (${columns}, bucket)
         select ${columns}, :to from ${table} where bucket <> :to and ${OWNED_BY[table]}`,
        { party, to },
      );
    }
    for (const { table } of [...BUCKET_TABLES].reverse()) {
      await trx.raw(`delete from ${table} where bucket <> :to and ${OWNED_BY[table]}`, { party, to });
    }
  });
}
