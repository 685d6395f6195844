import { SEARCH_OPERATORS } from '@platform/shared';
import type { Knex } from '@platform/db';
import { z } from 'zod';
import { AppError, type FieldErrors } from './errors';
import { PageQuery } from './pagination';
import { queryBoolean } from './validate';

/** `bigint`: a bigserial id (webhooks, changes, attempts: changes' ids start at 10^10 × day), any safe whole number. */
export type FieldType = 'integer' | 'bigint' | 'number' | 'string' | 'boolean' | 'timestamp' | 'date';

/** One attribute a client may sort or filter by: its SQL column (or expression) and type. */
export interface FieldSpec {
  column: string;
  type: FieldType;
}

/**
 * What a collection exposes to sorting and searching. Names are the response's camelCase
 * names; nested attributes use dotted paths (`address.city`).
 */
export interface CollectionSpec<F extends string = string> {
  fields: Record<F, FieldSpec>;
  /** Attributes allowed in `SortByAttributeName` and in a search's `sort`. */
  sortable: readonly F[];
  /** Attributes allowed in a search's `filters`; defaults to every field. */
  searchable?: readonly F[];
  /** Applied last, so pages are stable; normally the id. */
  tieBreaker: string;
}

function caseInsensitiveEnum(names: readonly string[], what: string) {
  const byLower = new Map(names.map((n) => [n.toLowerCase(), n]));
  return z
    .string()
    .transform((value, ctx) => {
      const name = byLower.get(value.toLowerCase());
      if (name) return name;
      ctx.addIssue({
        code: 'custom',
        message: `Unknown ${what} "${value.slice(0, 50)}"; allowed: ${names.join(', ')}`,
      });
      return z.NEVER;
    })
    .meta({ type: 'string', enum: [...names] });
}

/** The query of a plain list GET: paging plus `SortByAttributeName` from the allow-list. */
export function listQuery(spec: CollectionSpec) {
  return PageQuery.extend({
    SortByAttributeName: caseInsensitiveEnum(spec.sortable, 'sort attribute').optional(),
    AscendingOrder: queryBoolean.default(true),
  });
}
export type ListQuery = z.infer<ReturnType<typeof listQuery>>;

const scalar = z.union([z.string().max(1000), z.number(), z.boolean(), z.null()]);

/** The search body DSL (docs/decisions.md#api-conventions), its attributes limited to the collection's allow-lists. */
export function searchBody(spec: CollectionSpec) {
  const searchable = spec.searchable ?? Object.keys(spec.fields);
  return z.strictObject({
    filters: z
      .array(
        z.strictObject({
          attribute: caseInsensitiveEnum(searchable, 'filter attribute'),
          operator: caseInsensitiveEnum(SEARCH_OPERATORS, 'operator'),
          value: z.union([scalar, z.array(scalar).max(100)]).optional(),
        }),
      )
      .max(20)
      .default([]),
    sort: z
      .array(
        z.strictObject({
          attribute: caseInsensitiveEnum(spec.sortable, 'sort attribute'),
          ascending: z.boolean().default(true),
        }),
      )
      .max(5)
      .default([]),
  });
}
export type SearchBody = z.infer<ReturnType<typeof searchBody>>;

/** Orders by the requested attribute (or the tie-breaker) and always last by the tie-breaker. */
export function applySort(
  query: Knex.QueryBuilder,
  spec: CollectionSpec,
  sort: { attribute: string; ascending: boolean }[],
): Knex.QueryBuilder {
  for (const { attribute, ascending } of sort) {
    const field = spec.fields[attribute];
    if (field) query.orderByRaw(`${field.column} ${ascending ? 'asc' : 'desc'} nulls last`);
  }
  return query.orderBy(spec.tieBreaker, sort[0]?.ascending === false ? 'desc' : 'asc');
}

/** Applies a plain list's `SortByAttributeName`/`AscendingOrder`. */
export function applyListSort(
  query: Knex.QueryBuilder,
  spec: CollectionSpec,
  list: ListQuery,
): Knex.QueryBuilder {
  const attribute = list.SortByAttributeName ?? null;
  if (!attribute) {
    return query.orderBy(spec.tieBreaker, list.AscendingOrder ? 'asc' : 'desc');
  }
  return applySort(query, spec, [{ attribute, ascending: list.AscendingOrder }]);
}

function checkValue(type: FieldType, value: unknown): string | undefined {
  switch (type) {
    case 'integer':
      return Number.isInteger(value) && Math.abs(value as number) <= 2147483647
        ? undefined
        : 'must be a 32-bit whole number';
    case 'bigint':
      return Number.isSafeInteger(value) ? undefined : 'must be a whole number';
    case 'number':
      // a `numeric` column: Postgres compares the decimal exactly
      return typeof value === 'number' && Number.isFinite(value) ? undefined : 'must be a number';
    case 'boolean':
      return typeof value === 'boolean' ? undefined : 'must be true or false';
    case 'string':
      return typeof value === 'string' ? undefined : 'must be a string';
    case 'timestamp':
      return typeof value === 'string' && isIsoTimestamp(value) ? undefined : 'must be an ISO 8601 timestamp';
    case 'date':
      return typeof value === 'string' && /^\d{4}-\d{2}-\d{2}$/.test(value) && isIsoTimestamp(value)
        ? undefined
        : 'must be a date, YYYY-MM-DD';
  }
}

const ISO_TIMESTAMP =
  /^(\d{4})-(\d{2})-(\d{2})(?:T(\d{2}):(\d{2})(?::(\d{2})(?:\.\d{1,9})?)?(?:Z|[+-](\d{2}):?(\d{2}))?)?$/;

/**
 * An ISO 8601 date or date-time, years 1–9999, that names a real calendar moment: Postgres
 * parses what passes, unlike `Date.parse`, which takes `"1"` or `2020-02-30` and would leave
 * Postgres to fail on them.
 */
/** A query value that must be an ISO 8601 timestamp (`isIsoTimestamp`), rendered as a date-time in OpenAPI. */
export const timestampText = (name: string) =>
  z
    .string()
    .refine(isIsoTimestamp, `${name} must be an ISO 8601 timestamp`)
    .meta({ type: 'string', format: 'date-time' });

export function isIsoTimestamp(text: string): boolean {
  const match = ISO_TIMESTAMP.exec(text);
  if (!match) return false;
  const [year, month, day, hour = 0, minute = 0, second = 0, offsetHours = 0, offsetMinutes = 0] = match
    .slice(1)
    .map((part) => (part === undefined ? undefined : Number(part)));
  if (year! < 1 || month! < 1 || month! > 12 || day! < 1) return false;
  const daysInMonth =
    new Date(Date.UTC(2000, month!, 0)).getUTCDate() - (month === 2 && !isLeapYear(year!) ? 1 : 0);
  return (
    day! <= daysInMonth &&
    hour <= 23 &&
    minute <= 59 &&
    second <= 59 &&
    offsetHours <= 15 &&
    offsetMinutes <= 59
  );
}

function isLeapYear(year: number): boolean {
  return year % 4 === 0 && (year % 100 !== 0 || year % 400 === 0);
}

function escapeLike(text: string): string {
  return text.replace(/[\\%_]/g, (c) => `\\${c}`);
}

/** Adds the search's filters to `query`; every value is checked against its field's type first. */
export function applyFilters(
  query: Knex.QueryBuilder,
  spec: CollectionSpec,
  body: SearchBody,
): Knex.QueryBuilder {
  const errors: FieldErrors = {};
  const fail = (index: number, message: string) => (errors[`filters.${index}.value`] ??= []).push(message);
  body.filters.forEach(({ attribute, operator, value }, index) => {
    const field = spec.fields[attribute]!;
    // field.column comes from the resource's declaration, never from the request
    const column = field.column;
    switch (operator) {
      case 'isNull': {
        if (value !== undefined && typeof value !== 'boolean')
          return fail(index, 'isNull takes true, false or no value');
        query.whereRaw(`${column} is ${value === false ? 'not ' : ''}null`);
        return;
      }
      case 'in': {
        if (!Array.isArray(value) || value.length === 0) return fail(index, 'in takes a non-empty array');
        const problem = value.map((v) => checkValue(field.type, v)).find(Boolean);
        if (problem) return fail(index, `every element ${problem}`);
        query.whereRaw(
          `${column} in (${value.map(() => '?').join(', ')})`,
          value as (string | number | boolean)[],
        );
        return;
      }
      case 'contains':
      case 'startsWith': {
        if (field.type !== 'string') return fail(index, `${operator} applies to text attributes only`);
        if (typeof value !== 'string') return fail(index, 'must be a string');
        const pattern = operator === 'contains' ? `%${escapeLike(value)}%` : `${escapeLike(value)}%`;
        query.whereRaw(`${column} ilike ?`, [pattern]);
        return;
      }
      default: {
        if (Array.isArray(value) || value === undefined)
          return fail(index, `${operator} takes a single value`);
        if (value === null) {
          if (operator === 'eq' || operator === 'ne')
            query.whereRaw(`${column} is ${operator === 'ne' ? 'not ' : ''}null`);
          else fail(index, `${operator} cannot compare with null`);
          return;
        }
        const problem = checkValue(field.type, value);
        if (problem) return fail(index, problem);
        if (operator === 'ne') {
          query.whereRaw(`(${column} <> ? or ${column} is null)`, [value]);
        } else {
          const sqlOperator = { eq: '=', lt: '<', lte: '<=', gt: '>', gte: '>=' }[operator];
          query.whereRaw(`${column} ${sqlOperator} ?`, [value]);
        }
      }
    }
  });
  if (Object.keys(errors).length > 0) {
    throw new AppError('ValidationFailed', `Invalid search: ${Object.keys(errors).join(', ')}`, errors);
  }
  return query;
}
