import pino, { type Logger } from 'pino';
import type { TestApi } from '../testing';

/** A logger at the most verbose level whose every line is kept, to read what the API logged. */
export function captureLogger(): { logger: Logger; lines: string[] } {
  const lines: string[] = [];
  const logger = pino({ level: 'trace' }, { write: (line: string) => void lines.push(line) });
  return { logger, lines };
}

/** Tables that only the migration tool writes. */
const MIGRATION_TABLES = new Set(['knex_migrations', 'knex_migrations_lock']);

/** Every table and its row count, and the newest record of `fuzz_writes`. */
export interface WriteSnapshot {
  counts: Record<string, number>;
  lastWrite: number;
}

/**
 * Records every row written to any table of the test database in `fuzz_writes` (table and
 * operation), by a row trigger on each: committed writes stay recorded, rolled-back ones vanish
 * with their transaction. Row counts miss an update, or a delete and an insert; this does not.
 * `snapshot` takes the row count of every table (as `allTableCounts` does) and the newest
 * record in one query.
 */
export async function recordWrites(api: TestApi): Promise<{
  snapshot(): Promise<WriteSnapshot>;
  /** `table op` of each write recorded after `lastWrite`. */
  since(lastWrite: number): Promise<string[]>;
}> {
  const knex = api.deps.knex;
  await knex.raw(`
    create table fuzz_writes (id bigserial primary key, table_name text not null, op text not null);
    create function fuzz_record_write() returns trigger language plpgsql as $$
      begin
        insert into fuzz_writes (table_name, op) values (tg_table_name, tg_op);
        return null;
      end $$;
  `);
  const { rows } = await knex.raw<{ rows: { name: string }[] }>(
    `select table_name as name from information_schema.tables
     where table_schema = 'public' and table_type = 'BASE TABLE' and table_name <> 'fuzz_writes'
     order by table_name`,
  );
  const tables = rows.map((row) => row.name).filter((name) => !MIGRATION_TABLES.has(name));
  for (const name of tables) {
    await knex.raw(
      `create trigger fuzz_record_write after insert or update or delete on ?? for each row execute function fuzz_record_write()`,
      [name],
    );
  }
  const countsSql = knex
    .raw(
      `select ${tables.map(() => '(select count(*) from ??) as ??').join(', ')},
        (select coalesce(max(id), 0) from fuzz_writes) as fuzz_last_write`,
      tables.flatMap((name) => [name, name]),
    )
    .toString();
  return {
    snapshot: async () => {
      const result = await knex.raw<{ rows: Record<string, string>[] }>(countsSql);
      const { fuzz_last_write: lastWrite, ...counts } = result.rows[0] ?? {};
      return {
        counts: Object.fromEntries(Object.entries(counts).map(([name, count]) => [name, Number(count)])),
        lastWrite: Number(lastWrite),
      };
    },
    since: async (lastWrite) =>
      (
        await knex('fuzz_writes')
          .where('id', '>', lastWrite)
          .orderBy('id')
          .select<{ table_name: string; op: string }[]>('table_name', 'op')
      ).map((row) => `${row.table_name} ${row.op}`),
  };
}
