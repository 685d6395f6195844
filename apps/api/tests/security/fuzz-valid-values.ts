/**
 * Schema-valid values for the fuzz run, generated from an operation's own JSON schemas (formats,
 * patterns, enums, bounds and their exact boundaries), ids biased to rows that exist.
 */
import fc from 'fast-check';
import type { OpenApiDocument, Schema } from './fuzz-document';
import { SQL_STRINGS, TRAVERSAL_STRINGS } from './fuzz-hostile-values';
import type { JsonValue } from './json-text';

export interface ValueContext {
  document: OpenApiDocument;
  /** Ids worth trying: those of rows that exist, so valid requests reach the services. */
  ids: fc.Arbitrary<number>;
  /**
   * Emails worth trying: those of accounts that exist, so logins, recoveries and recovery codes
   * reach a real account (and its strike counter), not only the unknown-email path.
   */
  emails?: fc.Arbitrary<string>;
}

export function resolveRef(schema: Schema, document: OpenApiDocument): Schema {
  let current = schema;
  for (let hops = 0; typeof current.$ref === 'string' && hops < 10; hops++) {
    const name = current.$ref.replace('#/components/schemas/', '');
    current = { ...document.components?.schemas?.[name], ...current, $ref: undefined };
  }
  return current;
}

const isoDate = fc
  .date({ min: new Date('1900-01-01T00:00:00Z'), max: new Date('2199-12-31T00:00:00Z'), noInvalidDate: true })
  .map((date) => date.toISOString());

const byPattern = new Map<string, fc.Arbitrary<string> | undefined>();

/** Strings matching `pattern`; built once per pattern, as building one is slow. */
function stringFromPattern(pattern: string): fc.Arbitrary<string> | undefined {
  if (!byPattern.has(pattern)) {
    let arbitrary: fc.Arbitrary<string> | undefined;
    for (const flags of ['u', '']) {
      try {
        arbitrary = fc.stringMatching(new RegExp(pattern, flags));
        break;
      } catch {
        // not a pattern fast-check reads with these flags
      }
    }
    byPattern.set(pattern, arbitrary);
  }
  return byPattern.get(pattern);
}

function validString(schema: Schema, context: ValueContext, name: string): fc.Arbitrary<string> {
  const minLength = typeof schema.minLength === 'number' ? schema.minLength : 0;
  const maxLength = typeof schema.maxLength === 'number' ? schema.maxLength : 2000;
  const fits = (text: string) => text.length >= minLength && text.length <= maxLength;
  // a field named email (the document gives it a pattern, or nothing): half of them real
  if (/^email$/i.test(name) && context.emails) {
    return fc.oneof(
      context.emails.filter(fits),
      validString(schema, { ...context, emails: undefined }, name),
    );
  }
  switch (schema.format) {
    case 'email':
      return fc.emailAddress().filter(fits);
    case 'date-time':
      return isoDate;
    case 'date':
      return isoDate.map((text) => text.slice(0, 10));
    case 'uri':
    case 'url':
      return fc.webUrl().filter(fits);
    case 'uuid':
      return fc.uuid();
  }
  if (typeof schema.pattern === 'string') {
    const matching = stringFromPattern(schema.pattern);
    if (matching) return matching.filter(fits);
  }
  const short = Math.min(maxLength, Math.max(minLength, 30));
  const options: fc.Arbitrary<string>[] = [
    fc.string({ minLength, maxLength: short }),
    fc.string({ unit: 'grapheme', minLength, maxLength: short }),
    fc.constantFrom(...SQL_STRINGS, ...TRAVERSAL_STRINGS, '💩', 'Ünïcödé').filter(fits),
  ];
  // the boundaries themselves
  if (maxLength <= 10_000) options.push(fc.constant('x'.repeat(maxLength)));
  if (minLength > 0) options.push(fc.constant('y'.repeat(minLength)));
  return fc.oneof(...options);
}

function validNumber(
  schema: Schema,
  name: string,
  context: ValueContext,
  integer: boolean,
): fc.Arbitrary<number> {
  const exclusiveMin = typeof schema.exclusiveMinimum === 'number' ? schema.exclusiveMinimum : undefined;
  const exclusiveMax = typeof schema.exclusiveMaximum === 'number' ? schema.exclusiveMaximum : undefined;
  let min = typeof schema.minimum === 'number' ? schema.minimum : (exclusiveMin ?? -1e12);
  let max = typeof schema.maximum === 'number' ? schema.maximum : (exclusiveMax ?? 1e12);
  const step = typeof schema.multipleOf === 'number' ? schema.multipleOf : integer ? 1 : undefined;
  if (step !== undefined) {
    // whole multiples of the step, written with as many decimals as the step has
    const decimals = (String(step).split('.')[1] ?? '').length;
    let low = Math.ceil(min / step);
    let high = Math.floor(max / step);
    if (exclusiveMin !== undefined && low * step <= exclusiveMin) low++;
    if (exclusiveMax !== undefined && high * step >= exclusiveMax) high--;
    low = Math.max(low, Number.MIN_SAFE_INTEGER);
    high = Math.min(high, Number.MAX_SAFE_INTEGER);
    const INT32 = 2 ** 31;
    const multiples = fc
      .oneof(
        fc.constantFrom(low, high),
        fc.integer({ min: Math.max(low, -INT32), max: Math.min(high, INT32 - 1) }),
      )
      .map((k) => Number((k * step).toFixed(decimals)));
    const idLike = /id$/i.test(name) && integer && low <= 1 && high >= 50;
    return idLike
      ? fc.oneof({ arbitrary: context.ids, weight: 4 }, { arbitrary: multiples, weight: 1 })
      : multiples;
  }
  if (exclusiveMin !== undefined) min = exclusiveMin + Number.EPSILON * Math.max(1, Math.abs(exclusiveMin));
  if (exclusiveMax !== undefined) max = exclusiveMax - Number.EPSILON * Math.max(1, Math.abs(exclusiveMax));
  return fc.oneof(fc.constantFrom(min, max), fc.double({ min, max, noNaN: true, noDefaultInfinity: true }));
}

/** A value `schema` accepts (as far as JSON schema says: zod refinements may still refuse it). */
export function validValue(
  schema: Schema,
  context: ValueContext,
  name = '',
  depth = 0,
): fc.Arbitrary<JsonValue> {
  const resolved = resolveRef(schema, context.document);
  if (depth > 8) return fc.constant(null);
  if ('const' in resolved) return fc.constant(resolved.const as JsonValue);
  if (Array.isArray(resolved.enum) && resolved.enum.length > 0) {
    return fc.constantFrom(...(resolved.enum as JsonValue[]));
  }
  const alternatives = (resolved.anyOf ?? resolved.oneOf) as Schema[] | undefined;
  if (Array.isArray(alternatives)) {
    return fc.oneof(...alternatives.map((item) => validValue(item, context, name, depth + 1)));
  }
  if (Array.isArray(resolved.allOf) && resolved.allOf.length > 0) {
    return validValue(resolved.allOf[0] as Schema, context, name, depth + 1);
  }
  const type = resolved.type;
  if (Array.isArray(type)) {
    return fc.oneof(...type.map((item) => validValue({ ...resolved, type: item }, context, name, depth + 1)));
  }
  switch (type) {
    case 'null':
      return fc.constant(null);
    case 'boolean':
      return fc.boolean();
    case 'integer':
      return validNumber(resolved, name, context, true);
    case 'number':
      return validNumber(resolved, name, context, false);
    case 'string':
      return validString(resolved, context, name);
    case 'array': {
      const items = validValue((resolved.items as Schema) ?? {}, context, name, depth + 1);
      const minLength = typeof resolved.minItems === 'number' ? resolved.minItems : 0;
      const maxItems = typeof resolved.maxItems === 'number' ? resolved.maxItems : 10;
      const lists = [fc.array(items, { minLength, maxLength: Math.min(maxItems, Math.max(minLength, 5)) })];
      if (maxItems <= 200) lists.push(fc.array(items, { minLength: maxItems, maxLength: maxItems }));
      return fc.oneof(
        { arbitrary: lists[0]!, weight: 4 },
        ...lists.slice(1).map((arbitrary) => ({ arbitrary, weight: 1 })),
      );
    }
    case 'object':
    case undefined: {
      const properties = (resolved.properties ?? {}) as Record<string, Schema>;
      if (type === undefined && Object.keys(properties).length === 0)
        return fc.jsonValue({ maxDepth: 2 }) as fc.Arbitrary<JsonValue>;
      const required = new Set((resolved.required as string[] | undefined) ?? []);
      const shape = Object.fromEntries(
        Object.entries(properties).map(([key, property]) => [
          key,
          validValue(property, context, key, depth + 1),
        ]),
      );
      const record = fc.record(shape, {
        requiredKeys: [...required].filter((key) => key in shape),
      }) as fc.Arbitrary<Record<string, JsonValue>>;
      const extra = resolved.additionalProperties;
      if (extra && typeof extra === 'object' && Object.keys(properties).length === 0) {
        return fc.dictionary(
          fc.string({ minLength: 1, maxLength: 10 }),
          validValue(extra as Schema, context, '', depth + 1),
          {
            maxKeys: 3,
          },
        );
      }
      return record;
    }
    default:
      return fc.constant(null);
  }
}
