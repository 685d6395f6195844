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
}

/** A Knex instance on `connectionString`. */
export function createKnex(connectionString: string, options: CreateKnexOptions = {}): Knex {
  return knexFactory({
    client: 'pg',
    connection: { connectionString, application_name: options.applicationName ?? 'platform' },
    pool: { min: options.pool?.min ?? 0, max: options.pool?.max ?? 10 },
  });
}

export type { Knex };
