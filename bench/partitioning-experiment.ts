/**
 * Experiments behind docs/decisions.md › Time partitioning; not a bench mode.
 *
 *   DATABASE_URL=postgres://… npx tsx bench/partitioning-experiment.ts
 *
 * 1. The fair claim's pick (`CLAIM_PICK_SQL`) on `webhooks` as it is, against the same rows in a `webhooks`
 *    partitioned by day like `entity_changes` and `webhook_attempts` (range of id,
 *    `time_partitions_ensure`): HISTORY finished webhooks over DAYS days (default 100,000 over
 *    33), 50 registrations with 1,000 due webhooks each. Median execution time (EXPLAIN ANALYZE in
 *    a transaction rolled back), nine runs each, interleaved, and whether both are index scans.
 * 2. The last attempt of the 20 newest finished webhooks (`lastAttemptOf`), one attempt per
 *    finished webhook in the partition of its day, against the same rows in one table.
 * 3. The hot path's two statements on these tables, as the old shape (one table; attempts with
 *    their foreign key to `webhooks`) against the new (partitioned, no such key): a flush's insert
 *    of 16 attempts, a claim's read of 64 recent changes by id, and an enqueue's insert of 10
 *    webhooks of one change (its foreign key checked against the old or the partitioned table). CPU of the database session
 *    per statement (/proc/<backend pid>/stat), RUNS blocks of 500 each, interleaved.
 */
import { readFile } from 'node:fs/promises';
import {
  CLAIM_PICK_SQL,
  claimBindings,
  createKnex,
  migrate,
  newPartyPlacement,
  type Knex,
} from '@platform/db';
import { WebhookState } from '@platform/shared';
import { adminQuery, withDatabase } from '@platform/testkit';
import { lastAttemptOf } from '../apps/api/src/features/webhooks/webhook-presenter';

const admin = process.env.DATABASE_URL;
if (!admin) throw new Error('DATABASE_URL is required');
const HISTORY = Number(process.env.HISTORY ?? 100_000);
const DAYS = Number(process.env.DAYS ?? 33);
const REGISTRATIONS = 50;
const DUE_PER_REGISTRATION = 1_000;
const RUNS = 9;

/** Makes `webhooks` partitioned by range of id, with the same columns, checks and indexes. */
async function partitionWebhooks(knex: Knex): Promise<void> {
  await knex.raw(`
    alter table webhooks rename to webhooks_plain;
    create table webhooks (like webhooks_plain including defaults including constraints) partition by range (id);
    alter table webhooks add primary key (id);
    alter sequence webhooks_id_seq owned by webhooks.id;
  `);
  const { rows } = await knex.raw<{ rows: { definition: string }[] }>(
    `select pg_get_indexdef(indexrelid) as definition from pg_index
      where indrelid = 'webhooks_plain'::regclass and not indisprimary`,
  );
  await knex.raw(`drop table webhooks_plain cascade`);
  for (const { definition } of rows) {
    await knex.raw(definition.replace('ON public.webhooks_plain', 'ON public.webhooks'));
  }
}

async function setup(name: string, partitioned: boolean): Promise<Knex> {
  await adminQuery(admin!, `drop database if exists ${name} with (force)`);
  await adminQuery(admin!, `create database ${name}`);
  const knex = createKnex(withDatabase(admin!, name), { pool: { max: 2 } });
  await migrate(knex);
  if (partitioned) await partitionWebhooks(knex);
  const [{ id: party }] = await knex('parties')
    .insert({ type: 1, name: 'x', ...(await newPartyPlacement(knex, null)) })
    .returning('id');
  await knex.raw(
    `insert into webhook_registrations (party_id, bucket, target_url, signing_secret)
     select ?, (select bucket from parties where id = ?), 'http://127.0.0.1:' || (10000 + g) || '/hook', 'x'
       from generate_series(1, ?) g`,
    [party, party, REGISTRATIONS],
  );
  await knex.raw(
    `insert into webhook_events (registration_id, bucket, entity_name, type)
     select id, bucket, 'Unit', 2 from webhook_registrations`,
  );
  await knex.raw(
    `insert into entity_changes (entity_name, type, entity_id, entity, initiator_party_id) values ('Unit', 2, 1, '{}', ?)`,
    [party],
  );
  const { rows } = await knex.raw<{ rows: { today: string }[] }>(
    `select (now() at time zone 'UTC')::date::text as today`,
  );
  const today = rows[0]!.today;
  const perDay = Math.floor(HISTORY / DAYS);
  for (let ago = DAYS; ago >= 1; ago--) {
    const { rows: days } = await knex.raw<{ rows: { day: string }[] }>(
      `select (?::date - ?::int)::text as day`,
      [today, ago],
    );
    const day = days[0]!.day;
    if (partitioned) await knex.raw(`select time_partitions_ensure('webhooks', ?::date, 0)`, [day]);
    // finished webhooks of that day, in that day's id range when partitioned
    await knex.raw(
      `insert into webhooks (id, registration_id, bucket, event_id, entity_change_id, state, created, completed_at)
       select ${partitioned ? 'time_partition_start(?::date) + g' : "nextval('webhooks_id_seq') + 0 * length(?)"},
              (select min(id) from webhook_registrations) + g % ?,
              -- the registrations are all one party's: they share its bucket
              (select bucket from webhook_registrations order by id limit 1), (select min(id) from webhook_events),
              (select min(id) from entity_changes), ${WebhookState.Successful},
              ?::date + make_interval(secs => g * 86000.0 / ?), ?::date + make_interval(secs => g * 86000.0 / ?)
         from generate_series(1, ?) g`,
      [day, REGISTRATIONS, day, perDay, day, perDay, perDay],
    );
  }
  if (partitioned) await knex.raw(`select time_partitions_ensure('webhooks', ?::date, 2)`, [today]);
  await knex.raw(
    `insert into webhooks (registration_id, bucket, event_id, entity_change_id, state, next_attempt_at)
     select r.id, r.bucket, (select min(id) from webhook_events), (select min(id) from entity_changes),
            ${WebhookState.Created},
            now() - interval '1 minute' + g * interval '1 ms'
       from webhook_registrations r cross join generate_series(1, ?) g`,
    [DUE_PER_REGISTRATION],
  );
  await knex.raw(`vacuum analyze webhooks`);
  return knex;
}

async function claim(knex: Knex): Promise<{ ms: number; indexScan: boolean }> {
  const trx = await knex.transaction();
  try {
    const { rows } = await trx.raw<{ rows: Record<string, string>[] }>(
      `explain (analyze, costs off) ${CLAIM_PICK_SQL}`,
      claimBindings({ batch: 64, leaseMs: 60_000, dispatcherId: 'x', rooms: new Map(), defaultRoom: 32 }),
    );
    const plan = rows.map((row) => row['QUERY PLAN']!);
    const time = plan.find((line) => line.startsWith('Execution Time'))!;
    return {
      ms: Number(/([\d.]+) ms/.exec(time)![1]),
      // on the partitions, the claimable index is each partition's copy of it
      indexScan:
        plan.some((line) =>
          /Index (Only )?Scan using webhooks_(claimable|\d{8}_registration_id_next)/.test(line),
        ) && !plan.some((line) => /Seq Scan on webhooks/.test(line)),
    };
  } finally {
    await trx.rollback();
  }
}

/**
 * The second question: what a read of attempts by webhook (`lastAttemptOf`, the last attempt of
 * each webhook of a page) costs now that attempts are partitioned by day. Seeds one attempt per
 * finished webhook of `knex` (plain `webhooks`) into the partition of its day, copies them into one
 * unpartitioned table with the same indexes, and times the subquery for the 20 newest finished
 * webhooks on each.
 */
async function lastAttemptSetup(knex: Knex): Promise<void> {
  const { rows } = await knex.raw<{ rows: { day: string }[] }>(
    `select distinct created::date::text as day from webhooks where state = ${WebhookState.Successful}`,
  );
  for (const { day } of rows) {
    await knex.raw(`select time_partitions_ensure('webhook_attempts', ?::date, 0)`, [day]);
    await knex.raw(
      `insert into webhook_attempts (id, webhook_id, number, started_at, duration_ms, status_code, created)
       select time_partition_start(?::date) + row_number() over (order by id), id, 1, created, 5, 200, created
         from webhooks where state = ${WebhookState.Successful} and created::date = ?::date`,
      [day, day],
    );
  }
}

async function lastAttemptMs(knex: Knex, table: string): Promise<number> {
  const { rows } = await knex.raw<{ rows: Record<string, string>[] }>(
    `explain (analyze, costs off)
     select w.id, ${lastAttemptOf('a.status_code').replace('webhook_attempts a', `${table} a`)}
       from webhooks w where w.state = ${WebhookState.Successful} order by w.id desc limit 20`,
  );
  const time = rows.map((row) => row['QUERY PLAN']!).find((line) => line.startsWith('Execution Time'))!;
  return Number(/([\d.]+) ms/.exec(time)![1]);
}

async function processCpuMs(pid: number): Promise<number> {
  const fields = (await readFile(`/proc/${pid}/stat`, 'utf8')).replace(/^.*\) /, '').split(' ');
  return (Number(fields[11]) + Number(fields[12])) * 10;
}

/** Changes over the days of the finished webhooks, and copies of both tables in the old shape. */
async function hotPathSetup(knex: Knex): Promise<void> {
  const { rows } = await knex.raw<{ rows: { day: string }[] }>(
    `select distinct created::date::text as day from webhooks where state = ${WebhookState.Successful} order by 1`,
  );
  const party = (await knex('parties').first('id'))!.id;
  for (const { day } of rows) {
    await knex.raw(`select time_partitions_ensure('entity_changes', ?::date, 0)`, [day]);
    await knex.raw(
      `insert into entity_changes (id, entity_name, type, entity_id, entity, initiator_party_id, created)
       select time_partition_start(?::date) + g, 'Unit', 2, g, jsonb_build_object('notes', repeat('x', 1000)), ?, ?::date
         from generate_series(1, 2000) g`,
      [day, party, day],
    );
  }
  await knex.raw(`
    create table entity_changes_old (like entity_changes including defaults including constraints);
    insert into entity_changes_old select * from entity_changes;
    alter table entity_changes_old add primary key (id);
    create table webhook_attempts_old (like webhook_attempts including defaults including constraints);
    insert into webhook_attempts_old select * from webhook_attempts;
    alter table webhook_attempts_old add primary key (id),
      add foreign key (webhook_id) references webhooks (id) on delete cascade;
    create index on webhook_attempts_old (created);
    create index on webhook_attempts_old (webhook_id, id desc);
  `);
  // the enqueue's webhooks, as far as the foreign key to their change goes
  await knex.raw(`
    create table webhooks_fk_old (like webhooks including defaults);
    alter table webhooks_fk_old add foreign key (entity_change_id) references entity_changes_old (id);
    create table webhooks_fk_new (like webhooks including defaults);
    alter table webhooks_fk_new add foreign key (entity_change_id) references entity_changes (id);
  `);
  await knex.raw(`vacuum analyze entity_changes, entity_changes_old, webhook_attempts, webhook_attempts_old`);
}

/** CPU µs of the session per statement, for `statements` runs of `sql`. */
async function cpuPerStatement(
  knex: Knex,
  pid: number,
  sql: string,
  bindings: readonly unknown[],
): Promise<number> {
  const statements = 500;
  const before = await processCpuMs(pid);
  for (let i = 0; i < statements; i++) await knex.raw(sql, bindings as Knex.RawBinding[]);
  return (((await processCpuMs(pid)) - before) * 1000) / statements;
}

const databases = {
  plain: await setup('experiment_claim_plain', false),
  partitioned: await setup('experiment_claim_partitioned', true),
};
const times: Record<string, number[]> = { plain: [], partitioned: [] };
const indexScan: Record<string, boolean> = { plain: true, partitioned: true };
for (let run = 0; run < RUNS; run++) {
  for (const [name, knex] of Object.entries(databases)) {
    const result = await claim(knex);
    times[name]!.push(result.ms);
    indexScan[name] &&= result.indexScan;
  }
}
await lastAttemptSetup(databases.plain);
await hotPathSetup(databases.plain);
const lastAttempt: Record<string, number[]> = { plain: [], partitioned: [] };
for (let run = 0; run < RUNS; run++) {
  lastAttempt.plain!.push(await lastAttemptMs(databases.plain, 'webhook_attempts_old'));
  lastAttempt.partitioned!.push(await lastAttemptMs(databases.plain, 'webhook_attempts'));
}
const { rows: attemptPartitions } = await databases.plain.raw<{ rows: { n: number }[] }>(
  `select count(*)::int as n from pg_inherits where inhparent = 'webhook_attempts'::regclass`,
);
const session = createKnex(withDatabase(admin, 'experiment_claim_plain'), { pool: { min: 1, max: 1 } });
const pid = (await session.raw<{ rows: { pid: number }[] }>(`select pg_backend_pid() as pid`)).rows[0]!.pid;
const webhookIds = (
  await session.raw<{ rows: { id: number }[] }>(`select id from webhooks order by id desc limit 16`)
).rows.map((row) => row.id);
const changeIds = (
  await session.raw<{ rows: { id: number }[] }>(`select id from entity_changes order by id desc limit 64`)
).rows.map((row) => row.id);
const insert = (table: string) =>
  `insert into ${table} (webhook_id, number, started_at, duration_ms, status_code)
   select id, 1, now(), 5, 200 from unnest(?::bigint[]) as id`;
const read = (table: string) => `select c.entity from ${table} c where c.id = any(?::bigint[])`;
const enqueue = (table: string) =>
  `insert into ${table} (registration_id, bucket, event_id, entity_change_id, state)
   select 1, (select bucket from webhook_registrations where id = 1), 1, ?::bigint, ${WebhookState.Created}
     from generate_series(1, 10)`;
const hotPath: Record<string, number[]> = {
  insertOld: [],
  insertNew: [],
  readOld: [],
  readNew: [],
  enqueueOld: [],
  enqueueNew: [],
};
for (let run = 0; run < RUNS; run++) {
  hotPath.insertOld!.push(await cpuPerStatement(session, pid, insert('webhook_attempts_old'), [webhookIds]));
  hotPath.insertNew!.push(await cpuPerStatement(session, pid, insert('webhook_attempts'), [webhookIds]));
  hotPath.readOld!.push(await cpuPerStatement(session, pid, read('entity_changes_old'), [changeIds]));
  hotPath.readNew!.push(await cpuPerStatement(session, pid, read('entity_changes'), [changeIds]));
  hotPath.enqueueOld!.push(await cpuPerStatement(session, pid, enqueue('webhooks_fk_old'), [changeIds[0]]));
  hotPath.enqueueNew!.push(await cpuPerStatement(session, pid, enqueue('webhooks_fk_new'), [changeIds[0]]));
}
await session.destroy();
const median = (values: number[]) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)]!;
const { rows } = await databases.partitioned.raw<{ rows: { n: number }[] }>(
  `select count(*)::int as n from pg_inherits where inhparent = 'webhooks'::regclass`,
);
console.log(
  JSON.stringify({
    history: HISTORY,
    days: DAYS,
    partitions: rows[0]!.n,
    plainMs: median(times.plain!),
    partitionedMs: median(times.partitioned!),
    ratio: Math.round((median(times.partitioned!) / median(times.plain!)) * 100) / 100,
    indexScan,
    runs: times,
    hotPathCpuMicroseconds: {
      insert16Attempts: { old: median(hotPath.insertOld!), partitioned: median(hotPath.insertNew!) },
      read64Changes: { old: median(hotPath.readOld!), partitioned: median(hotPath.readNew!) },
      insert10WebhooksOfAChange: {
        old: median(hotPath.enqueueOld!),
        partitioned: median(hotPath.enqueueNew!),
      },
      runs: hotPath,
    },
    lastAttemptOf20: {
      attemptPartitions: attemptPartitions[0]!.n,
      plainMs: median(lastAttempt.plain!),
      partitionedMs: median(lastAttempt.partitioned!),
      runs: lastAttempt,
    },
  }),
);
for (const [name, knex] of Object.entries(databases)) {
  await knex.destroy();
  await adminQuery(admin, `drop database if exists experiment_claim_${name} with (force)`);
}
