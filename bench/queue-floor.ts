import { queryPrepared, type Knex } from '@platform/db';
import { benchEntity } from './seed';

/**
 * The floor of the queue statements: the least a durable queue with an attempt row per try can
 * send per delivery, in the shape of ours, so `--queue` can say how far our statements are from
 * what Postgres does at all for this work. Three bare tables: jobs with the one index a claim
 * needs (`floor_jobs_claimable`, next_attempt_at of the due states) beside the primary key, each
 * job's 1 KB entity in a table of its own (as ours are in `entity_changes`), and attempts with
 * the index that finds a job's latest. Per delivery: a lease that pushes `next_attempt_at` and
 * counts the try (not HOT: the claim's index changes, as ours), answering the entity; a
 * completion that sets the state; an attempt row. No fairness, endpoints, breakers, groups,
 * statistics, retry schedule or signing secrets: everything our statements do beyond that is the
 * distance to this floor.
 */
const FLOOR_SCHEMA = [
  `create table floor_changes (id bigint primary key, entity jsonb not null)`,
  `create table floor_jobs (
     id bigint primary key, state smallint not null, next_attempt_at timestamptz not null default now(),
     attempt_count smallint not null default 0, locked_by text, change_id bigint not null,
     completed_at timestamptz)`,
  `create index floor_jobs_claimable on floor_jobs (next_attempt_at) where state in (1, 2)`,
  `create table floor_attempts (
     id bigserial primary key, job_id bigint not null, number smallint not null,
     started_at timestamptz not null, duration_ms int, status_code smallint,
     created timestamptz not null default now())`,
  `create index floor_attempts_job_latest on floor_attempts (job_id, id desc)`,
];

/** The floor's claim: up to $1 due jobs leased to $2 for a minute, with their entities. */
const FLOOR_CLAIM = {
  name: 'floor-claim',
  text: `with picked as (
           select id from floor_jobs where state in (1, 2) and next_attempt_at <= now()
            order by next_attempt_at limit $1 for update skip locked),
         leased as (
           update floor_jobs j set next_attempt_at = now() + interval '60 seconds', locked_by = $2,
                  attempt_count = j.attempt_count + 1
             from picked p where j.id = p.id
           returning j.id, j.attempt_count, j.change_id)
         select coalesce(json_agg(json_build_object('id', l.id, 'attempt', l.attempt_count, 'entity', c.entity)), '[]')
                  as leased
           from leased l join floor_changes c on c.id = l.change_id`,
};

/** The floor's completion: the jobs of $1 at the attempts of $2, leased to $3, Successful, each with an attempt row. */
const FLOOR_COMPLETE = {
  name: 'floor-complete',
  text: `with results as (select * from unnest($1::bigint[], $2::smallint[]) as r(id, attempt)),
         done as (
           update floor_jobs j set state = 3, locked_by = null, completed_at = now()
             from results r
            where j.id = r.id and j.locked_by = $3 and j.attempt_count = r.attempt
           returning j.id, r.attempt)
         insert into floor_attempts (job_id, number, started_at, duration_ms, status_code)
         select id, attempt, now(), 1, 200 from done
         returning job_id`,
};

export interface FloorJob {
  id: number;
  attempt: number;
  entity: unknown;
}

/** Creates the floor's tables in `knex`'s database, with `count` due jobs, each its own entity of our seed's shape. */
export async function seedFloor(knex: Knex, count: number): Promise<void> {
  for (const statement of FLOOR_SCHEMA) await knex.raw(statement);
  const entity = benchEntity(10_000, 10_000, 1, new Date().toISOString());
  await knex.raw(
    `insert into floor_changes (id, entity)
     select i, jsonb_set(?::jsonb, '{id}', to_jsonb(i)) from generate_series(1, ?::int) i`,
    [JSON.stringify(entity), count],
  );
  await knex.raw(
    `insert into floor_jobs (id, state, change_id) select i, 1, i from generate_series(1, ?::int) i`,
    [count],
  );
  await knex.raw('analyze');
}

/** The floor's statements in the shape of `drainWithoutHttp`'s: a claim of up to `batch`, the completion of a batch. */
export const FLOOR_STATEMENTS = {
  async claim(knex: Knex, batch: number): Promise<FloorJob[]> {
    const rows = await queryPrepared<{ leased: FloorJob[] }>(knex, FLOOR_CLAIM, [batch, 'bench']);
    return rows[0]!.leased;
  },
  async complete(knex: Knex, batch: readonly FloorJob[]): Promise<{ applied: number[]; leased: FloorJob[] }> {
    const rows = await queryPrepared<{ job_id: string }>(knex, FLOOR_COMPLETE, [
      batch.map((job) => job.id),
      batch.map((job) => job.attempt),
      'bench',
    ]);
    return { applied: rows.map((row) => Number(row.job_id)), leased: [] };
  },
};
