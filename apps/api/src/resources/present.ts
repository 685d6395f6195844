import type { Row } from './resource';

/** A timestamp column as ISO 8601, null kept. */
export function iso(value: unknown): string | null {
  return value instanceof Date
    ? value.toISOString()
    : value === null || value === undefined
      ? null
      : String(value);
}

/** The bookkeeping fields every read shape carries. */
export function entityMeta(row: Row) {
  return {
    id: row.id,
    created: iso(row.created)!,
    lastModified: iso(row.last_modified),
    deleted: iso(row.deleted),
  };
}
