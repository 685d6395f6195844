import fc from 'fast-check';

/**
 * A JSON object as its list of members, for what a JS object cannot hold: a key given twice, a
 * `__proto__` member.
 */
export class JsonMembers {
  constructor(readonly members: readonly (readonly [string, JsonValue])[]) {}
  [fc.toStringMethod](): string {
    return `{${this.members.map(([key, value]) => `${JSON.stringify(key)}: ${fc.stringify(value)}`).join(', ')}}`;
  }
}

/**
 * JSON text put in as it is, built only when sent (so a failure report stays short): numbers no
 * double holds, nesting thousands deep, a list of a hundred thousand ids, a string of a megabyte.
 */
export class RawJson {
  constructor(
    readonly label: string,
    readonly make: () => string,
  ) {}
  [fc.toStringMethod](): string {
    return `raw(${this.label})`;
  }
}

export type JsonValue =
  null | boolean | number | string | JsonValue[] | JsonMembers | RawJson | { [key: string]: JsonValue };

/** The JSON text of `value` (lone surrogates and NUL escaped, as JSON.stringify does). */
export function jsonText(value: JsonValue): string {
  if (value instanceof RawJson) return value.make();
  if (value instanceof JsonMembers) {
    return `{${value.members.map(([key, member]) => `${JSON.stringify(key)}:${jsonText(member)}`).join(',')}}`;
  }
  if (Array.isArray(value)) return `[${value.map(jsonText).join(',')}]`;
  if (value !== null && typeof value === 'object') {
    return `{${Object.entries(value)
      .map(([key, member]) => `${JSON.stringify(key)}:${jsonText(member)}`)
      .join(',')}}`;
  }
  return JSON.stringify(value) ?? 'null';
}
