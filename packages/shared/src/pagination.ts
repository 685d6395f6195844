import { z } from 'zod';

export const DEFAULT_PAGE_SIZE = 20;
export const MAX_PAGE_SIZE = 100;
export const MAX_BATCH_IDS = 100;

/** The paginated list envelope (docs/decisions.md#api-conventions). */
export function Page<T extends z.ZodType>(item: T) {
  return z.object({
    items: z.array(item),
    pageNumber: z.number().int(),
    pageSize: z.number().int(),
    totalCount: z.number().int(),
    totalPages: z.number().int(),
    hasPreviousPage: z.boolean(),
    hasNextPage: z.boolean(),
  });
}
export interface Page<T> {
  items: T[];
  pageNumber: number;
  pageSize: number;
  totalCount: number;
  totalPages: number;
  hasPreviousPage: boolean;
  hasNextPage: boolean;
  /** A list whose count is capped (the webhooks' search): the count stopped at `totalCount`, more match. */
  totalCountCapped?: boolean;
}

/** Batch read body: `{ ids: [...] }` (IdListDtoOfInt32). */
export const IdList = z
  .strictObject({ ids: z.array(z.number().int().min(1).max(2147483647)).min(1).max(MAX_BATCH_IDS) })
  .meta({ id: 'IdListDtoOfInt32' });
export type IdList = z.infer<typeof IdList>;

export const SEARCH_OPERATORS = [
  'eq',
  'ne',
  'lt',
  'lte',
  'gt',
  'gte',
  'contains',
  'startsWith',
  'in',
  'isNull',
] as const;
export type SearchOperator = (typeof SEARCH_OPERATORS)[number];

const FilterValue = z.union([z.string().max(1000), z.number(), z.boolean(), z.null()]);

/** The search body of a resource whose searchable attributes are `attributes`. */
export function SearchRequest<
  A extends readonly [string, ...string[]],
  S extends readonly [string, ...string[]],
>(attributes: A, sortable: S) {
  return z.strictObject({
    filters: z
      .array(
        z.strictObject({
          attribute: z.enum(attributes),
          operator: z.enum(SEARCH_OPERATORS),
          value: z.union([FilterValue, z.array(FilterValue).max(MAX_BATCH_IDS)]).optional(),
        }),
      )
      .max(20)
      .default([]),
    sort: z
      .array(z.strictObject({ attribute: z.enum(sortable), ascending: z.boolean().default(true) }))
      .max(5)
      .default([]),
  });
}
export interface SearchRequest {
  filters: { attribute: string; operator: SearchOperator; value?: unknown }[];
  sort: { attribute: string; ascending: boolean }[];
}
