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

/** A Knex instance on `connectionString`. */
export function createKnex(connectionString: string, options: CreateKnexOptions = {}): Knex {
  return knexFactory({
    client: 'pg',
    connection: {
      connectionString,
      application_name: options.applicationName ?? 'platform',
      ...(options.synchronousCommit === false ? { options: '-c synchronous_commit=off' } : {}),
    },
    pool: { min: options.pool?.min ?? 0, max: options.pool?.max ?? 10 },
  });
}

export type { Knex };
