/**
 * A statement with knex named bindings (`:name`) turned into positional ones (`$1`, …), one per
 * occurrence as knex sends them (a `::cast` is left alone), for a client other than knex that must
 * run exactly the product's SQL; `names` in their order.
 */
export function positional(sql: string): { text: string; names: string[] } {
  const names: string[] = [];
  const text = sql.replace(/(?<!:):([A-Za-z]\w*)/g, (_, name: string) => `$${names.push(name)}`);
  return { text, names };
}
