import knexFactory, { type Knex } from 'knex';
import pg from 'pg';

// bigint (int8) columns such as webhook ids come back as JS numbers: ids stay far below 2^53,
// and a string id would leak into every JSON body.
pg.types.setTypeParser(pg.types.builtins.INT8, (value) => Number(value));

export interface CreateKnexOptions {
  /** Pool bounds; the default suits an API replica. */
  pool?: { min?: number; max?: number };
  /** Name shown in pg_stat_activity. */
  applicationName?: string;
  /**
   * `synchronous_commit` of the pool's sessions. Off lets a commit return before its WAL reaches
   * the disk: a Postgres crash may forget the last few hundred milliseconds of this pool's
   * commits, never corrupt anything. Only for writers that can afford it (the dispatcher).
   */
  synchronousCommit?: boolean;
}

/**
 * A Knex instance on `connectionString`. Its sessions run with JIT compilation off: every
 * statement of the API and the dispatcher is short, and JIT's compile time (20–40 ms) buys
 * nothing there. The planner turns it on by estimated cost, which dead rows inflate: after a
 * drain of 50,000 webhooks the fair claim's estimate crossed `jit_above_cost` and each claim
 * took 45 ms instead of 2.6 ms until the next vacuum.
 */
export function createKnex(connectionString: string, options: CreateKnexOptions = {}): Knex {
  const settings = [
    '-c jit=off',
    ...(options.synchronousCommit === false ? ['-c synchronous_commit=off'] : []),
  ];
  return knexFactory({
    client: 'pg',
    connection: {
      connectionString,
      application_name: options.applicationName ?? 'platform',
      options: settings.join(' '),
    },
    pool: { min: options.pool?.min ?? 0, max: options.pool?.max ?? 10 },
  });
}

export type { Knex };
