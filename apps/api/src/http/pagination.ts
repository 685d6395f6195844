import { DEFAULT_PAGE_SIZE, MAX_PAGE_SIZE, type Page } from '@platform/shared';
import type { Knex } from '@platform/db';
import { z } from 'zod';
import { wholeNumberText } from './validate';

const pageInt = (name: string, max: number, fallback: number) => wholeNumberText(name, 1, max, fallback);

/** `PageSize` (1–100, default 20) and `PageNumber` (from 1) of every list and search. */
export const PageQuery = z.strictObject({
  PageSize: pageInt('PageSize', MAX_PAGE_SIZE, DEFAULT_PAGE_SIZE),
  PageNumber: pageInt('PageNumber', 1_000_000, 1),
});
export type PageQuery = z.infer<typeof PageQuery>;

/**
 * Runs `query` for one page and counts the whole result. `query` must not be ordered by the
 * caller's count; ordering is kept for the page and dropped for the count.
 */
export async function paginate<Row, Out>(
  query: Knex.QueryBuilder,
  page: PageQuery,
  present: (row: Row) => Out,
): Promise<Page<Out>> {
  const countQuery = query.clone().clearSelect().clearOrder().count<{ count: string }[]>({ count: '*' });
  const [rows, counted] = await Promise.all([
    query
      .clone()
      .limit(page.PageSize)
      .offset((page.PageNumber - 1) * page.PageSize) as Promise<Row[]>,
    countQuery,
  ]);
  const totalCount = Number(counted[0]?.count ?? 0);
  const totalPages = Math.ceil(totalCount / page.PageSize);
  return {
    items: rows.map(present),
    pageNumber: page.PageNumber,
    pageSize: page.PageSize,
    totalCount,
    totalPages,
    hasPreviousPage: page.PageNumber > 1,
    hasNextPage: page.PageNumber < totalPages,
  };
}
