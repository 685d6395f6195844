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

/** The settings createKnex's sessions start with (sent as the startup packet's `options`). */
function sessionSettings(options: CreateKnexOptions): Record<string, string> {
  return { jit: 'off', ...(options.synchronousCommit === false ? { synchronous_commit: 'off' } : {}) };
}

/**
 * The session settings createKnex asked for (`name=value`) that a session of `knex` does not
 * have. A connection pooler may drop the startup packet's `options` (PgBouncer refuses them
 * unless told to ignore them); then they belong on the role (`alter role … set jit = off`,
 * docs/dispatcher.md › Behind PgBouncer). Empty when every one is in effect.
 */
export async function missingSessionSettings(knex: Knex, options: CreateKnexOptions = {}): Promise<string[]> {
  const wanted = sessionSettings(options);
  const { rows } = await knex.raw<{ rows: { name: string; setting: string }[] }>(
    'select name, setting from pg_settings where name = any(?)',
    [Object.keys(wanted)],
  );
  const actual = new Map(rows.map((row) => [row.name, row.setting]));
  return Object.entries(wanted)
    .filter(([name, value]) => actual.get(name) !== value)
    .map(([name, value]) => `${name}=${value}`);
}

/**
 * A Knex instance on `connectionString`. Its sessions run with JIT compilation off: every
 * statement of the API and the dispatcher is short, and JIT's compile time (20–40 ms) buys
 * nothing there. The planner turns it on by estimated cost, which dead rows inflate: after a
 * drain of 50,000 webhooks the fair claim's estimate crossed `jit_above_cost` and each claim
 * took 45 ms instead of 2.6 ms until the next vacuum.
 */
export function createKnex(connectionString: string, options: CreateKnexOptions = {}): Knex {
  const settings = Object.entries(sessionSettings(options)).map(([name, value]) => `-c ${name}=${value}`);
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
