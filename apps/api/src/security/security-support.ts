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

/**
 * Records every row written to any table of the test database in `fuzz_writes` (table and
 * operation), by a row trigger on each: committed writes stay recorded, rolled-back ones vanish
 * with their transaction. Row counts miss an update, or a delete and an insert; this does not.
 */
export async function recordWrites(api: TestApi): Promise<{
  /** The newest record so far (cheap: one index lookup). */
  mark(): Promise<number>;
  /** `table op` of each write recorded after `mark`, oldest first. */
  since(mark: number): Promise<string[]>;
  /** The row count of every table the triggers watch, in one query. */
  counts(): Promise<Record<string, number>>;
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
      `select ${tables.map(() => '(select count(*) from ??) as ??').join(', ')}`,
      tables.flatMap((name) => [name, name]),
    )
    .toString();
  return {
    mark: async () => {
      const [row] = await knex('fuzz_writes').max<{ max: string | null }[]>({ max: 'id' });
      return Number(row?.max ?? 0);
    },
    since: async (mark) =>
      (
        await knex('fuzz_writes')
          .where('id', '>', mark)
          .orderBy('id')
          .select<{ table_name: string; op: string }[]>('table_name', 'op')
      ).map((row) => `${row.table_name} ${row.op}`),
    counts: async () => {
      const result = await knex.raw<{ rows: Record<string, string>[] }>(countsSql);
      return Object.fromEntries(Object.entries(result.rows[0] ?? {}).map(([name, n]) => [name, Number(n)]));
    },
  };
}

/**
 * The tables whose row count changed from `before` to `after` by other than the rows `writes`
 * (`table op` records) inserted and deleted: a table the write log would have missed.
 */
export function unexplainedCounts(
  before: Record<string, number>,
  after: Record<string, number>,
  writes: readonly string[],
): string[] {
  const net = new Map<string, number>();
  for (const write of writes) {
    const [table, op] = write.split(' ') as [string, string];
    net.set(table, (net.get(table) ?? 0) + (op === 'INSERT' ? 1 : op === 'DELETE' ? -1 : 0));
  }
  return Object.keys(after).filter(
    (table) => (after[table] ?? 0) - (before[table] ?? 0) !== (net.get(table) ?? 0),
  );
}
