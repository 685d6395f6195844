/**
 * An experiment behind docs/decisions.md › Time partitioning: the fair claim (`CLAIM_SQL`) on
 * `webhooks` as it is, against the same rows in a `webhooks` partitioned by day like
 * `entity_changes` and `webhook_attempts` (range of id, `time_partitions_ensure`). Not a bench
 * mode: nothing runs on a partitioned `webhooks`; it shows why.
 *
 *   DATABASE_URL=postgres://… npx tsx bench/claim-on-partitioned-webhooks.ts
 *   (HISTORY finished webhooks over DAYS days, default 100,000 over 33; 50 registrations with
 *   1,000 due webhooks each)
 *
 * Prints the median execution time of the claim (EXPLAIN ANALYZE in a transaction rolled back),
 * nine runs each, interleaved, and whether both are index scans; then the same for the last
 * attempt of 20 webhooks (`lastAttemptOf`) on attempts partitioned by day and on one table.
 */
import { CLAIM_SQL, claimBindings, createKnex, migrate, type Knex } from '@platform/db';
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
  const [{ id: party }] = await knex('parties').insert({ type: 1, name: 'x' }).returning('id');
  await knex.raw(
    `insert into webhook_registrations (party_id, target_url, signing_secret)
     select ?, 'http://127.0.0.1:' || (10000 + g) || '/hook', 'x' from generate_series(1, ?) g`,
    [party, REGISTRATIONS],
  );
  await knex.raw(
    `insert into webhook_events (registration_id, entity_name, type) select id, 'Unit', 2 from webhook_registrations`,
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
      `insert into webhooks (id, registration_id, event_id, entity_change_id, state, created, completed_at)
       select ${partitioned ? 'time_partition_start(?::date) + g' : "nextval('webhooks_id_seq') + 0 * length(?)"},
              (select min(id) from webhook_registrations) + g % ?, (select min(id) from webhook_events),
              (select min(id) from entity_changes), ${WebhookState.Successful},
              ?::date + make_interval(secs => g * 86000.0 / ?), ?::date + make_interval(secs => g * 86000.0 / ?)
         from generate_series(1, ?) g`,
      [day, REGISTRATIONS, day, perDay, day, perDay, perDay],
    );
  }
  if (partitioned) await knex.raw(`select time_partitions_ensure('webhooks', ?::date, 2)`, [today]);
  await knex.raw(
    `insert into webhooks (registration_id, event_id, entity_change_id, state, next_attempt_at)
     select r.id, (select min(id) from webhook_events), (select min(id) from entity_changes), ${WebhookState.Created},
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
      `explain (analyze, costs off) ${CLAIM_SQL}`,
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
  await knex.raw(`
    create table webhook_attempts_plain as select * from webhook_attempts;
    alter table webhook_attempts_plain add primary key (id);
    create index on webhook_attempts_plain (webhook_id, id desc);
    vacuum analyze webhook_attempts, webhook_attempts_plain;
  `);
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
const lastAttempt: Record<string, number[]> = { plain: [], partitioned: [] };
for (let run = 0; run < RUNS; run++) {
  lastAttempt.plain!.push(await lastAttemptMs(databases.plain, 'webhook_attempts_plain'));
  lastAttempt.partitioned!.push(await lastAttemptMs(databases.plain, 'webhook_attempts'));
}
const { rows: attemptPartitions } = await databases.plain.raw<{ rows: { n: number }[] }>(
  `select count(*)::int as n from pg_inherits where inhparent = 'webhook_attempts'::regclass`,
);
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
