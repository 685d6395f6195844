import type { Row } from './resource';

/** A timestamp column as ISO 8601, null kept. */
export function iso(value: unknown): string | null {
  return value instanceof Date
    ? value.toISOString()
    : value === null || value === undefined
      ? null
      : String(value);
}

/**
 * A `date` column as `YYYY-MM-DD`, null kept. node-postgres parses a date into a Date at local
 * midnight, so the local calendar fields are the stored date (toISOString could shift it a day).
 */
export function isoDate(value: unknown): string | null {
  if (value === null || value === undefined) return null;
  if (!(value instanceof Date)) return String(value).slice(0, 10);
  const pad = (n: number, width = 2) => String(n).padStart(width, '0');
  return `${pad(value.getFullYear(), 4)}-${pad(value.getMonth() + 1)}-${pad(value.getDate())}`;
}

/** A `numeric` column (which node-postgres returns as a string, to keep precision) as a number. */
export function decimal(value: unknown): number | null {
  return value === null || value === undefined ? null : Number(value);
}

/** The bookkeeping fields every read shape carries. */
function entityMeta(row: Row) {
  return {
    id: row.id,
    created: iso(row.created)!,
    lastModified: iso(row.last_modified),
    deleted: iso(row.deleted),
  };
}

/**
 * A read shape: the bookkeeping fields of `row` (id, created, lastModified, deleted), then
 * `fields`. Not `{ ...entityMeta(row), ...fields }`: V8 builds a literal that starts with a spread
 * and goes on with ten more properties one slow step at a time, about 12 µs a row against 1 µs
 * here, which was a tenth of a GET list's CPU (docs/performance.md#api-cpu).
 */
export function withMeta<T extends object>(row: Row, fields: T): ReturnType<typeof entityMeta> & T {
  return Object.assign(entityMeta(row), fields);
}
