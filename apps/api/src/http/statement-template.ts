import type { CompiledSql } from './pagination';

/**
 * A statement whose shape is fixed (a resource's read, a list in one sort order), built once with
 * Knex and bound per request: Knex's building and compiling costs about a tenth of a list GET's
 * CPU, the SQL never changes between requests, only the values do.
 *
 * It is built with `placeholders`, distinct sentinel values of the parameters (a party id, a row
 * id, a limit), and the compiled bindings remember which parameter each sentinel stands for;
 * every other binding (a `limit 1`, a constant of the query) is kept as compiled.
 */
export interface StatementTemplate<P extends string> {
  sql: string;
  bind(values: Record<P, unknown>): unknown[];
}

/** A Knex builder, or SQL it compiled. */
export type Compilable = { toSQL(): CompiledSql } | CompiledSql;

/** Sentinels far from any real id, limit or offset. */
const SENTINEL_BASE = 1_987_654_300;

/**
 * Compiles `build(placeholders)`, where each name in `parameters` stands for a sentinel number;
 * `build` must use them as bindings, never inside SQL text.
 */
export function compileTemplate<P extends string>(
  parameters: readonly P[],
  build: (placeholders: Record<P, number>) => Compilable,
): StatementTemplate<P> {
  const placeholders = Object.fromEntries(parameters.map((name, i) => [name, SENTINEL_BASE + i])) as Record<
    P,
    number
  >;
  const built = build(placeholders);
  const { sql, bindings } = 'toSQL' in built ? built.toSQL() : built;
  const slots = bindings.map((value): { name: P } | { value: unknown } => {
    const name = typeof value === 'number' ? parameters[value - SENTINEL_BASE] : undefined;
    return name === undefined ? { value } : { name };
  });
  return {
    sql,
    bind: (values) => slots.map((slot) => ('name' in slot ? values[slot.name] : slot.value)),
  };
}
