import knexFactory, { type Knex } from 'knex';
import { BUCKET_TABLES } from './bucket-layout';

/**
 * The plans of every statement a piece of code runs, nested ones included, on the bucket layout
 * (docs/scaling.md › The emulation database › Single-partition plans): one session with
 * `auto_explain` sending each plan to the client as a notice (JSON), custom plans so the bucket's
 * value prunes at plan time. The database's functions lose their own `plan_cache_mode` (they run
 * with generic plans, docs/decisions.md › Database, and a function's setting overrides the
 * session's): call `customPlansForFunctions` once on the database first.
 */
export interface PlanRecorder {
  /** The recorder's one session. */
  knex: Knex;
  /** Runs `work` on the recorder's session and answers the plans of the statements it ran. */
  record<T>(work: (knex: Knex) => Promise<T>): Promise<{ result: T; plans: StatementPlan[] }>;
  destroy(): Promise<void>;
}

export interface StatementPlan {
  /** The statement's text, whitespace collapsed. */
  query: string;
  /** Per distributed table the plan reads or writes, the partition numbers it touches. */
  partitions: Map<string, Set<number>>;
}

const DISTRIBUTED = new Set(BUCKET_TABLES.map((t) => t.table));

/** The partitions of the distributed tables a plan touches (pruned ones do not appear). */
export function partitionsOf(plan: unknown): Map<string, Set<number>> {
  const found = new Map<string, Set<number>>();
  const visit = (node: unknown): void => {
    if (Array.isArray(node)) return node.forEach(visit);
    if (node === null || typeof node !== 'object') return;
    const relation = (node as Record<string, unknown>)['Relation Name'];
    if (typeof relation === 'string') {
      const match = /^(.*)_b(\d+)$/.exec(relation);
      if (match && DISTRIBUTED.has(match[1]!)) {
        found.set(match[1]!, (found.get(match[1]!) ?? new Set()).add(Number(match[2])));
      }
    }
    Object.values(node).forEach(visit);
  };
  visit(plan);
  return found;
}

/** Statements of `plans` that touch more than one partition of some distributed table. */
export function spread(plans: readonly StatementPlan[]): string[] {
  return plans
    .filter((plan) => [...plan.partitions.values()].some((set) => set.size > 1))
    .map((plan) => plan.query);
}

/** Takes the `plan_cache_mode` setting off every function of the database (test databases only). */
export async function customPlansForFunctions(knex: Knex): Promise<void> {
  const { rows } = await knex.raw<{ rows: { signature: string }[] }>(
    `select p.oid::regprocedure::text as signature from pg_proc p
      where p.pronamespace = 'public'::regnamespace and p.proconfig is not null`,
  );
  for (const { signature } of rows) await knex.raw(`alter function ${signature} reset all`);
}

export async function planRecorder(url: string): Promise<PlanRecorder> {
  const notices: string[] = [];
  const knex = knexFactory({
    client: 'pg',
    connection: { connectionString: url },
    pool: {
      min: 1,
      max: 1,
      afterCreate: (
        connection: {
          on(event: 'notice', listener: (notice: { message: string }) => void): void;
          query(sql: string, callback: (error: Error | null) => void): void;
        },
        done: (error: Error | null, connection: unknown) => void,
      ) => {
        connection.on('notice', (notice) => notices.push(notice.message));
        connection.query(
          `load 'auto_explain';
           set auto_explain.log_min_duration = 0; set auto_explain.log_nested_statements = on;
           set auto_explain.log_format = json; set auto_explain.log_level = notice;
           set plan_cache_mode = force_custom_plan`,
          (error) => done(error, connection),
        );
      },
    },
  });
  return {
    knex,
    async record(work) {
      await knex.raw('select 1');
      notices.length = 0;
      const result = await work(knex);
      const plans = notices
        .filter((message) => message.includes('plan:'))
        .map((message) => {
          const json = JSON.parse(message.slice(message.indexOf('{'))) as {
            'Query Text': string;
            Plan: unknown;
          };
          return {
            query: json['Query Text'].replace(/\s+/g, ' ').trim(),
            partitions: partitionsOf(json.Plan),
          };
        });
      notices.length = 0;
      return { result, plans };
    },
    destroy: () => knex.destroy(),
  };
}
