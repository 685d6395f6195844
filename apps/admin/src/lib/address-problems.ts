/**
 * What a list's address asks that its reader had to leave out, one phrase per parameter (empty
 * when it read everything): `registrationId "abc" (not a registration id)`. `read` is what the
 * reader made of the address; a parameter given but read otherwise (left out, or a default in its
 * place) is named with `rules[name]`. The webhooks table has its own, finer list
 * (`features/webhooks/utils/webhook-filters.ts` › `ignoredParams`).
 */
export function unreadParams<Query extends object>(
  params: URLSearchParams,
  read: Query,
  rules: Readonly<Partial<Record<keyof Query & string, string>>>,
): string[] {
  const problems: string[] = [];
  for (const [name, rule] of Object.entries(rules) as [string, string][]) {
    const given = params.get(name);
    if (given === null || given === '') continue;
    const value = (read as Record<string, unknown>)[name];
    if (value === undefined || String(value) !== given) problems.push(`${name} "${given}" (${rule})`);
  }
  return problems;
}
