import { z } from 'zod';

/** An ISO 8601 timestamp with offset, as every read shape writes `created`, `lastModified`, `deleted`. */
export const Timestamp = z.iso.datetime({ offset: true });

/** The bookkeeping fields every resource's read shape carries. */
export const EntityMeta = {
  id: z.number().int(),
  created: Timestamp,
  lastModified: Timestamp.nullable(),
  deleted: Timestamp.nullable(),
};

/** A reference to another record by id. */
export const Id = z.number().int().min(1).max(2147483647);

/** Trimmed, non-empty text of at most `max` characters. */
export const Text = (max: number) => z.string().trim().min(1).max(max);

/** An optional, nullable free text (null clears it in a merge patch). */
export const OptionalText = (max: number) => z.string().trim().max(max).nullable().optional();
