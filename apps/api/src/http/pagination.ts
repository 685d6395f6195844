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

/** The column of a page statement's rows that carries the total count. */
const TOTAL = 'page_total_count';

/**
 * One statement answering a page and the total count of the whole result: `count` (a query of
 * one row, one column `count`) joined to `page` (the ordered, limited query of the page's rows).
 * It answers at least one row, so the total arrives even for a page past the last row (a window
 * `count(*) over ()` over the page's rows would answer nothing there); that row's page columns
 * are then null, and `pageOf` drops it. The join has no condition, so Postgres runs it as a
 * nested loop over the one count row and the page's rows keep their order. Count and page read
 * the same snapshot, so they agree.
 */
export function pageStatement(count: string, page: string): string {
  return `select p.*, c.count as ${TOTAL} from (${count}) c left join lateral (${page}) p on true`;
}

/** Offset of the first row of `page`. */
export const offsetOf = (page: PageQuery) => (page.PageNumber - 1) * page.PageSize;

/** The page of the rows a `pageStatement` answered; `countCap`: the cap its count was taken under. */
export function pageOf<Row, Out>(
  rows: Record<string, unknown>[],
  page: PageQuery,
  present: (row: Row) => Out,
  countCap?: number,
): Page<Out> {
  const counted = Number(rows[0]?.[TOTAL] ?? 0);
  const capped = countCap !== undefined && counted > countCap;
  const totalCount = capped ? countCap : counted;
  // past the last row the statement answers the count alone, on a row of nulls
  const onPage = counted > offsetOf(page) ? rows : [];
  const totalPages = Math.ceil(totalCount / page.PageSize);
  return {
    items: onPage.map((row) => {
      delete row[TOTAL];
      return present(row as Row);
    }),
    pageNumber: page.PageNumber,
    pageSize: page.PageSize,
    totalCount,
    totalPages,
    hasPreviousPage: page.PageNumber > 1,
    hasNextPage: page.PageNumber < totalPages,
    ...(countCap === undefined ? {} : { totalCountCapped: capped }),
  };
}

/**
 * The `pageStatement` of `query` for the rows `limit` and `offset` pick, with its bindings. The
 * count drops the query's order; the page keeps it. With `countCap`, the count stops past the cap
 * (it reads `countCap + 1` rows at most, and `pageOf` says it stopped), so its cost stays bounded
 * however many rows match.
 */
export function pageSql(
  query: Knex.QueryBuilder,
  limit: number,
  offset: number,
  countCap?: number,
): CompiledSql {
  const counted = query.clone().clearSelect().clearOrder();
  const count =
    countCap === undefined
      ? counted.count({ count: '*' }).toSQL()
      : counted
          .select(query.client.raw('1'))
          .limit(countCap + 1)
          .toSQL();
  const countSql = countCap === undefined ? count.sql : `select count(*) as count from (${count.sql}) capped`;
  const rows = query.clone().limit(limit).offset(offset).toSQL();
  return { sql: pageStatement(countSql, rows.sql), bindings: [...count.bindings, ...rows.bindings] };
}

/** SQL with Knex's `?` placeholders and their values. */
export interface CompiledSql {
  sql: string;
  bindings: readonly unknown[];
}

/**
 * Runs `query` for one page with its total count, in one statement (`pageStatement`), on the
 * connection (or transaction) `query` was built on. `query` must not be ordered by the caller's
 * count; ordering is kept for the page and dropped for the count.
 */
export async function paginate<Row, Out>(
  query: Knex.QueryBuilder,
  page: PageQuery,
  present: (row: Row) => Out,
  countCap?: number,
): Promise<Page<Out>> {
  const { sql, bindings } = pageSql(query, page.PageSize, offsetOf(page), countCap);
  const { rows } = (await query.client.raw(sql, bindings)) as { rows: Record<string, unknown>[] };
  return pageOf(rows, page, present, countCap);
}
