/**
 * What the fuzz run sends: per operation of the OpenAPI document, fast-check arbitraries of
 * requests, from schema-valid ones (generated from the operation's own JSON schemas) to hostile
 * ones (wrong types, boundary numbers, unicode, SQL and path-traversal strings, deep and oversized
 * JSON, garbage headers).
 */
import fc from 'fast-check';
import { JsonMembers, RawJson, jsonText, type JsonValue } from './json-text';
import { percentEncode, type RawRequest } from './raw-http';

// ---------------------------------------------------------------------------------------------
// The document

type Schema = Record<string, unknown>;

interface Parameter {
  in: 'path' | 'query' | 'header' | 'cookie';
  name: string;
  required?: boolean;
  schema?: Schema;
}

export interface OpenApiDocument {
  paths: Record<string, Record<string, { parameters?: Parameter[]; requestBody?: RequestBody }>>;
  components?: { schemas?: Record<string, Schema> };
}

interface RequestBody {
  content: Record<string, { schema: Schema }>;
}

/** One operation of the document, as the fuzz run needs it. */
export interface Operation {
  method: 'get' | 'post' | 'put' | 'patch' | 'delete';
  /** The document's path template, `/api/accounts/{id}`. */
  path: string;
  pathParams: Parameter[];
  queryParams: Parameter[];
  /** The JSON or multipart request body, if the operation takes one. */
  body?: { mediaType: 'application/json' | 'multipart/form-data'; schema: Schema };
  /** Public (no token) or who may call it. */
  auth: 'public' | { allow: readonly number[] };
  /** Answers `text/plain` and `text/json` too. */
  textual: boolean;
}

const METHODS = ['get', 'post', 'put', 'patch', 'delete'] as const;

/** Every operation of `document`; `describe` adds what the document does not say (the guards). */
export function operationsOf(
  document: OpenApiDocument,
  describe: (method: Operation['method'], path: string) => Pick<Operation, 'auth' | 'textual'>,
): Operation[] {
  const operations: Operation[] = [];
  for (const [path, item] of Object.entries(document.paths)) {
    for (const method of METHODS) {
      const operation = item[method];
      if (!operation) continue;
      const parameters = operation.parameters ?? [];
      const content = operation.requestBody?.content ?? {};
      const mediaType = (['application/json', 'multipart/form-data'] as const).find((type) => content[type]);
      operations.push({
        method,
        path,
        pathParams: parameters.filter((p) => p.in === 'path'),
        queryParams: parameters.filter((p) => p.in === 'query'),
        body: mediaType ? { mediaType, schema: content[mediaType]!.schema } : undefined,
        ...describe(method, path),
      });
    }
  }
  return operations;
}

// ---------------------------------------------------------------------------------------------
// Hostile values

export const SQL_STRINGS = [
  "' OR '1'='1",
  "1' OR '1'='1' --",
  '1; DROP TABLE accounts; --',
  "'; DELETE FROM parties; --",
  "' UNION SELECT password_hash FROM accounts --",
  '1) OR pg_sleep(5) IS NULL --',
  "'||(SELECT version())||'",
  '" OR ""="',
  '%',
  '_',
  '\\',
  "\\'",
  '$1',
  '?',
  ':id',
  '${id}',
  '{{7*7}}',
] as const;

export const TRAVERSAL_STRINGS = [
  '../../../../etc/passwd',
  '..\\..\\..\\windows\\win.ini',
  '..%2f..%2fetc%2fpasswd',
  '..%2F',
  '%2e%2e%2f',
  '....//....//',
  '/etc/passwd',
  'file:///etc/passwd',
  '\\\\server\\share',
  '.',
  '..',
] as const;

export const UNICODE_STRINGS = [
  '',
  ' ',
  '\t\r\n',
  '\u0000',
  'a\u0000b',
  '\ud800',
  '\udfff',
  'x\ud83dy',
  '\udc00\ud800',
  '💩',
  '𝕏𝕐ℤ',
  'Ünïcödé',
  '\u202eevil',
  '\ufeffbom',
  '\uffff',
  'İı ß ǅ',
  '\u200b\u200c\u200d',
  'é'.normalize('NFD'),
  '<script>alert(1)</script>',
  '%00',
  '%ZZ',
  'null',
  'undefined',
  '__proto__',
  'constructor',
] as const;

/** Numbers at and past every boundary an id, a page or an amount has. */
export const BOUNDARY_NUMBERS = [
  0,
  -0,
  -1,
  1,
  0.5,
  1.5,
  -1.5,
  100,
  101,
  1000000,
  1000001,
  2147483647,
  2147483648,
  -2147483648,
  -2147483649,
  4294967296,
  9007199254740991,
  9007199254740992,
  -9007199254740992,
  1e21,
  1e308,
  -1e308,
  5e-324,
  Number.EPSILON,
] as const;

/** Number texts as they appear in a path or a query string. */
const NUMBER_TEXTS = [
  '0',
  '-1',
  '-0',
  '+1',
  '01',
  '1.0',
  '1.5',
  '1e3',
  '0x10',
  '0b1',
  '1_000',
  'NaN',
  'Infinity',
  '-Infinity',
  '2147483647',
  '2147483648',
  '-2147483649',
  '9007199254740993',
  '99999999999999999999999999999999999999',
  ' 1',
  '1 ',
  '1,2',
  '１',
] as const;

/** JSON number texts no double holds exactly, or at all. */
const RAW_NUMBERS = [
  '1e400',
  '-1e400',
  '123456789012345678901234567890',
  '0.00000000000000000000000000000000000001',
  '-0.0e-0',
  '2147483647.0000000001',
  '1E+2',
] as const;

/** Any UTF-16 code unit, lone surrogates and NUL included. */
const anyCodeUnit = fc.integer({ min: 0, max: 0xffff }).map((code) => String.fromCharCode(code));
/** Printable Latin-1, the only text HTTP/1.1 header values may carry here. */
const latin1 = fc
  .integer({ min: 0x20, max: 0xff })
  .filter((code) => code !== 0x7f)
  .map((code) => String.fromCharCode(code));

const hostileText: fc.Arbitrary<string> = fc.oneof(
  fc.constantFrom(...SQL_STRINGS, ...TRAVERSAL_STRINGS, ...UNICODE_STRINGS, ...NUMBER_TEXTS),
  fc.string({ unit: anyCodeUnit, maxLength: 40 }),
  fc.string({ unit: 'grapheme', maxLength: 40 }),
  fc.string({ unit: 'binary', maxLength: 40 }),
  fc.constantFrom(300, 5_000).map((length) => 'x'.repeat(length)),
);

/** Keys a hostile object uses: unknown names, prototype names, case twins of real fields. */
const hostileKey = fc.oneof(
  fc.constantFrom('__proto__', 'constructor', 'prototype', 'toString', 'hasOwnProperty', '', ' ', 'ID', 'Id'),
  fc.string({ maxLength: 12 }),
  fc.string({ unit: anyCodeUnit, maxLength: 8 }),
);

const made = new Map<string, string>();
/** Raw JSON text made once and kept, as the large ones are sent many times. */
const kept = (label: string, make: () => string) =>
  new RawJson(label, () => {
    if (!made.has(label)) made.set(label, make());
    return made.get(label)!;
  });
const deepArrays = (depth: number) =>
  kept(`[] nested ${depth} deep`, () => '['.repeat(depth) + ']'.repeat(depth));
const deepObjects = (depth: number) =>
  kept(`{} nested ${depth} deep`, () => '{"a":'.repeat(depth) + '1' + '}'.repeat(depth));
const hugeString = (bytes: number) =>
  kept(`a string of ${bytes} bytes`, () => JSON.stringify('€'.repeat(Math.ceil(bytes / 3))));
const hugeIdList = (count: number) =>
  kept(`a list of ${count} ids`, () => `[${Array.from({ length: count }, (_, i) => i + 1).join(',')}]`);

/**
 * Large values, built only when sent. Those of a megabyte are not random: every operation with a
 * body gets each of BOUNDARY_BODIES once.
 */
const oversized: fc.Arbitrary<JsonValue> = fc.oneof(
  fc.constantFrom(33, 40, 1_000).map(deepArrays),
  fc.constantFrom(33, 1_000).map(deepObjects),
  fc.constantFrom(5_000, 20_000).map(hugeString),
  fc.constantFrom(101, 1_000, 10_000).map(hugeIdList),
);

/** A JSON value of any type, shape and size, chosen to break things. */
export const hostileValue: fc.Arbitrary<JsonValue> = fc.letrec<{ value: JsonValue }>((tie) => ({
  value: fc.oneof(
    { depthSize: 'small' },
    { arbitrary: hostileText, weight: 4 },
    { arbitrary: fc.constantFrom(...BOUNDARY_NUMBERS), weight: 3 },
    { arbitrary: fc.constantFrom(...RAW_NUMBERS).map((text) => new RawJson(text, () => text)), weight: 1 },
    { arbitrary: fc.constantFrom<JsonValue>(null, true, false, [], {}, [null], ''), weight: 2 },
    { arbitrary: fc.array(tie('value'), { maxLength: 4 }), weight: 1 },
    {
      arbitrary: fc
        .array(fc.tuple(hostileKey, tie('value')), { maxLength: 4 })
        .map((members) => new JsonMembers(members)),
      weight: 1,
    },
    { arbitrary: oversized, weight: 1 },
  ),
})).value;

// ---------------------------------------------------------------------------------------------
// Schema-valid values

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

function resolveRef(schema: Schema, document: OpenApiDocument): Schema {
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

// ---------------------------------------------------------------------------------------------
// Requests

/** Who sends a request: a party of the test world by type, with or without permissions. */
export type Caller =
  | { kind: 'party'; partyType: number; holder: 'full' | 'bare'; other?: boolean }
  | { kind: 'none' }
  | { kind: 'garbage'; header: string };

export type Body =
  | { kind: 'json'; value: JsonValue }
  | { kind: 'bytes'; label: string; make: () => Buffer }
  | { kind: 'multipart'; boundary: string; parts: MultipartPart[]; tail: string };

export interface MultipartPart {
  name: string;
  fileName?: string;
  contentType?: string;
  content: string;
}

export interface FuzzCase {
  /** `valid` when every part came from the operation's schemas with a permitted caller. */
  kind: 'valid' | 'hostile';
  /** Path parameter values, encoded (hostile ones may be raw on purpose: `..%2f`). */
  pathValues: string[];
  /** The query string after `?`, encoded; empty for none. */
  query: string;
  headers: Record<string, string | string[]>;
  caller: Caller;
  body?: Body;
  chunked: boolean;
}

function bytesBody(label: string, make: () => Buffer): Body {
  const body: Body = { kind: 'bytes', label, make };
  return Object.assign(body, { [fc.toStringMethod]: () => `bytes(${label})` });
}

const INVALID_JSON_BODIES: Body[] = [
  ...[
    '{',
    '}',
    '{"a":}',
    "{'a':1}",
    '{"a":1,}',
    'undefined',
    'NaN',
    '{"a":1}garbage',
    '{"a":1}{"b":2}',
    '[',
    ']',
    '"',
    '\\',
    ' ',
  ].map((text) => bytesBody(JSON.stringify(text), () => Buffer.from(text))),
  bytesBody('BOM then {}', () => Buffer.from('\ufeff{}')),
  bytesBody('invalid UTF-8', () =>
    Buffer.from([0x7b, 0x22, 0x61, 0x22, 0x3a, 0x22, 0xff, 0xfe, 0xc0, 0x22, 0x7d]),
  ),
  bytesBody('UTF-16 {}', () => Buffer.from('{"a":1}', 'utf16le')),
  bytesBody('a NUL byte', () => Buffer.from('{"a":"\u0000"}')),
];

/**
 * The largest bodies, sent once to every operation that takes a body (and not at random, as each
 * costs time): a string field past the 1 MiB limit, an id list of 100,000 just under it, arrays
 * nested 100,000 deep, objects 50,000 deep.
 */
export const BOUNDARY_BODIES: Body[] = [
  { kind: 'json', value: new JsonMembers([['ids', hugeString(1_100_000)]]) },
  { kind: 'json', value: new JsonMembers([['ids', hugeIdList(100_000)]]) },
  { kind: 'json', value: deepArrays(100_000) },
  { kind: 'json', value: deepObjects(50_000) },
];

export const CONTENT_TYPES = [
  'text/plain',
  'application/x-www-form-urlencoded',
  'multipart/form-data',
  'multipart/form-data; boundary=x',
  'application/json; charset=utf-16',
  'application/json; charset=latin1',
  'application/json; charset=nope',
  'application/merge-patch+json',
  'application/vnd.evil+json',
  'application/json, text/plain',
  'application/xml',
  '',
  ';',
  '*/*',
  'application/*',
] as const;

const ACCEPTS = [
  'text/html',
  'application/xml',
  'image/png',
  '*/*;q=0',
  'application/json;q=0',
  'application/problem+json',
  'text/*',
  'text/plain',
  'text/json',
  '',
  ',,,',
  ';q=',
  'application/json;q=abc',
] as const;

const API_VERSIONS = [
  '0',
  '3',
  '2.1',
  '2.0.0',
  'v2',
  '1.',
  '.1',
  '',
  ' ',
  '2,2',
  'latest',
  '-1',
  '2e0',
  'ü',
] as const;

const latin1Text = (maxLength: number) => fc.string({ unit: latin1, maxLength });

/**
 * Garbage for every header the API reads; most requests get none of it. Request heads stay under
 * Node's 16 KiB limit (`maxHeaderSize`): past it Node itself answers a bare 431 before the API
 * runs (asserted apart in fuzz.test.ts).
 */
const hostileHeaders: fc.Arbitrary<Record<string, string | string[]>> = fc.record(
  {
    'api-version': fc.oneof(
      fc.constantFrom(...API_VERSIONS),
      latin1Text(20),
      fc.constant<string[]>(['1', '2']),
    ),
    accept: fc.oneof(fc.constantFrom(...ACCEPTS), latin1Text(60)),
    'accept-language': fc.oneof(fc.constantFrom('de-DE', '*', 'xx', '', 'en-DE;q=abc'), latin1Text(60)),
    'x-request-id': fc.oneof(latin1Text(120), fc.constant('r'.repeat(1000))),
    'content-encoding': fc.constantFrom('gzip', 'deflate', 'br', 'identity', 'compress', 'gzip, gzip', 'x'),
    'if-none-match': fc.oneof(fc.constantFrom('*', '"x"', 'W/"x"', ''), latin1Text(40)),
    'x-forwarded-for': fc.constantFrom('1.2.3.4', '::1', 'garbage', '127.0.0.1, 10.0.0.1'),
  },
  { requiredKeys: [] },
);

/** Hostile values for a path parameter, encoded or deliberately raw. */
const hostilePathValue: fc.Arbitrary<string> = fc.oneof(
  fc.constantFrom(...NUMBER_TEXTS).map(percentEncode),
  fc.constantFrom(
    '..%2f',
    '..%2F..%2Fetc%2Fpasswd',
    '%2e%2e',
    '%00',
    '%ff',
    '%',
    '%%',
    '%zz',
    '%C0%AE',
    '%ED%A0%80',
    '~',
    '*',
    ';',
    '@',
  ),
  fc.constantFrom(...SQL_STRINGS, ...TRAVERSAL_STRINGS, ...UNICODE_STRINGS).map(percentEncode),
  fc.string({ unit: anyCodeUnit, maxLength: 20 }).map(percentEncode),
  fc.constantFrom('myself', 'batch', 'search', 'content', 'attempts'),
  fc.constant('9'.repeat(1000)),
);

function validPathValue(parameter: Parameter, context: ValueContext): fc.Arbitrary<string> {
  return validValue(parameter.schema ?? { type: 'integer', minimum: 1 }, context, parameter.name).map(
    (value) => percentEncode(String(value)),
  );
}

function queryText(pairs: readonly (readonly [string, string])[]): string {
  return pairs.map(([name, value]) => `${name}=${value}`).join('&');
}

/** A valid value of a query parameter, as text. */
function validQueryValue(parameter: Parameter, context: ValueContext): fc.Arbitrary<string> {
  const schema = parameter.schema ?? {};
  // a query boolean is a string in the document; send what the API documents it takes
  if (schema.type === 'string' && !schema.enum && !schema.format) {
    return fc.constantFrom('true', 'false', '1', '0', 'TRUE', 'False');
  }
  return validValue(schema, context, parameter.name).map((value) => percentEncode(String(value)));
}

function validQuery(operation: Operation, context: ValueContext): fc.Arbitrary<string> {
  if (operation.queryParams.length === 0) return fc.constant('');
  return fc
    .tuple(
      ...operation.queryParams.map((parameter) =>
        parameter.required
          ? validQueryValue(parameter, context).map((value) => [[parameter.name, value] as const])
          : fc
              .option(validQueryValue(parameter, context), { nil: undefined })
              .map((value) => (value === undefined ? [] : [[parameter.name, value] as const])),
      ),
    )
    .map((lists) => queryText(lists.flat()));
}

function hostileQuery(operation: Operation, context: ValueContext): fc.Arbitrary<string> {
  const names = [
    ...operation.queryParams.map((p) => p.name),
    'pagesize',
    'PAGENUMBER',
    'unknown',
    '__proto__',
    'constructor',
  ];
  const value = fc.oneof(
    fc.constantFrom(...NUMBER_TEXTS, ...SQL_STRINGS, ...UNICODE_STRINGS).map(percentEncode),
    fc.string({ unit: anyCodeUnit, maxLength: 30 }).map(percentEncode),
    fc.constantFrom('%', '%zz', '%00', '', '[]', 'a[b]=c', '&&', '=', '+'),
    fc.constant('7'.repeat(1000)),
  );
  const pair = fc.tuple(
    fc.oneof(fc.constantFrom(...names), fc.string({ maxLength: 8 }).map(percentEncode)),
    value,
  );
  return fc.oneof(
    fc.array(pair, { minLength: 1, maxLength: 6 }).map(queryText),
    // a valid query with one parameter repeated or its name in two spellings
    fc
      .tuple(validQuery(operation, context), fc.constantFrom(...names), value)
      .map(([valid, name, extra]) =>
        [valid, `${name}=${extra}`, `${name}=${extra}`].filter(Boolean).join('&'),
      ),
    fc.constantFrom('&', '&&=&', '=', '%', '?', '#', 'a=%ff%fe', `${'x='.repeat(600)}`),
  );
}

/** A valid body with one thing wrong (or odd): an unknown field, a field of the wrong type, a case twin. */
function mutated(valid: fc.Arbitrary<JsonValue>): fc.Arbitrary<JsonValue> {
  return fc
    .tuple(valid, fc.nat({ max: 5 }), hostileKey, hostileValue, fc.nat())
    .map(([value, how, key, hostile, pick]) => {
      if (value === null || typeof value !== 'object' || Array.isArray(value) || value instanceof RawJson) {
        return [value, hostile];
      }
      const members = value instanceof JsonMembers ? [...value.members] : Object.entries(value);
      const index = members.length ? pick % members.length : 0;
      const target = members[index];
      switch (how) {
        case 0:
          return new JsonMembers([...members, [key, hostile]]);
        case 1:
          if (!target) return new JsonMembers([[key, hostile]]);
          members[index] = [target[0], hostile];
          return new JsonMembers(members);
        case 2:
          // the same field twice, in two spellings
          if (!target) return new JsonMembers([[key, hostile]]);
          return new JsonMembers([...members, [target[0].toUpperCase(), target[1]]]);
        case 3:
          // the same key twice in the JSON text (the last wins in JSON.parse)
          if (!target) return new JsonMembers([[key, hostile]]);
          return new JsonMembers([...members, [target[0], hostile]]);
        case 4:
          return new JsonMembers(members.filter((_, i) => i !== index));
        default:
          return [new JsonMembers(members)];
      }
    });
}

function jsonBody(
  operation: Operation,
  context: ValueContext,
): { valid: fc.Arbitrary<Body>; hostile: fc.Arbitrary<Body> } {
  const valid = validValue(operation.body!.schema, context);
  const json = (value: fc.Arbitrary<JsonValue>) => value.map((v): Body => ({ kind: 'json', value: v }));
  return {
    valid: json(valid),
    hostile: fc.oneof(
      { arbitrary: json(mutated(valid)), weight: 20 },
      { arbitrary: json(hostileValue), weight: 15 },
      { arbitrary: fc.constantFrom(...INVALID_JSON_BODIES), weight: 5 },
      // an id list past the limit where the operation takes ids
      {
        arbitrary: json(fc.constantFrom(101, 10_000).map((n) => new JsonMembers([['ids', hugeIdList(n)]]))),
        weight: 5,
      },
    ),
  };
}

const FILE_NAMES = [
  'report.pdf',
  '../../../../etc/passwd',
  '..\\..\\boot.ini',
  'a\u0000b.txt',
  '',
  '.',
  '..',
  '💩.png',
  'x'.repeat(300),
  'con.txt',
  '.htaccess',
  'name with "quotes".txt',
] as const;

function multipartBody(
  operation: Operation,
  context: ValueContext,
): { valid: fc.Arbitrary<Body>; hostile: fc.Arbitrary<Body> } {
  const schema = resolveRef(operation.body!.schema, context.document);
  const properties = (schema.properties ?? {}) as Record<string, Schema>;
  const fileParts = Object.keys(properties).filter((name) => properties[name]?.format === 'binary');
  const textFields = Object.keys(properties).filter((name) => !fileParts.includes(name));
  const textSchema = {
    ...schema,
    properties: Object.fromEntries(textFields.map((name) => [name, properties[name]!])),
  };
  const fields = validValue(textSchema, context).map((value) =>
    Object.entries((value ?? {}) as Record<string, JsonValue>).map(([name, field]): MultipartPart => ({
      name,
      content: typeof field === 'string' ? field : jsonText(field),
    })),
  );
  const file = (name: string) =>
    fc
      .record({
        fileName: fc.oneof(fc.constantFrom(...FILE_NAMES), fc.string({ unit: 'grapheme', maxLength: 20 })),
        contentType: fc.constantFrom(
          'application/pdf',
          'text/plain',
          'application/octet-stream',
          'image/png',
          'x/y',
          '',
        ),
        content: fc.string({ unit: 'binary-ascii', maxLength: 200 }),
      })
      .map((part): MultipartPart => ({ name, ...part }));
  const boundary = fc.stringMatching(/^[A-Za-z0-9'()+_,\-.:=?]{1,40}$/).filter((b) => !b.endsWith(' '));
  const valid = fc
    .tuple(boundary, fields, fc.tuple(...fileParts.map(file)))
    .map(([b, text, files]): Body => ({
      kind: 'multipart',
      boundary: b,
      parts: [...text, ...files],
      tail: '',
    }));
  const hostileParts = fc.array(
    fc.oneof(
      fc.constantFrom(...fileParts, 'other').chain(file),
      fc.record({
        name: fc.oneof(fc.constantFrom(...fileParts, ...textFields), hostileKey),
        content: hostileText,
      }),
    ),
    { maxLength: 5 },
  );
  const hostile = fc.oneof(
    // parts missing, repeated, unknown or of the wrong kind
    fc
      .tuple(boundary, hostileParts)
      .map(([b, parts]): Body => ({ kind: 'multipart', boundary: b, parts, tail: '' })),
    // a body cut off, or ending without the closing boundary
    fc
      .tuple(valid, fc.constantFrom('cut', 'no-close', 'garbage'))
      .map(([body, tail]): Body => (body.kind === 'multipart' ? { ...body, tail } : body)),
    // 150 text fields (more than the API reads)
    boundary.map((b): Body => ({
      kind: 'multipart',
      boundary: b,
      parts: Array.from({ length: 150 }, (_, i) => ({ name: `f${i}`, content: 'x' })),
      tail: '',
    })),
    fc.constantFrom(...INVALID_JSON_BODIES),
    fc.constant<Body>({ kind: 'json', value: {} }),
  );
  return { valid, hostile };
}

function multipartBytes(body: Extract<Body, { kind: 'multipart' }>): Buffer {
  const chunks: string[] = [];
  for (const part of body.parts) {
    const disposition = `form-data; name="${part.name.replace(/["\r\n]/g, '_')}"${
      part.fileName === undefined ? '' : `; filename="${part.fileName.replace(/["\r\n]/g, '_')}"`
    }`;
    chunks.push(
      `--${body.boundary}\r\nContent-Disposition: ${disposition}\r\n` +
        (part.contentType === undefined ? '' : `Content-Type: ${part.contentType}\r\n`) +
        `\r\n${part.content}\r\n`,
    );
  }
  let text = chunks.join('');
  if (body.tail === 'cut') text = text.slice(0, Math.floor(text.length / 2));
  else if (body.tail === 'garbage') text += `--${body.boundary}--\r\ngarbage after the end`;
  else if (body.tail !== 'no-close') text += `--${body.boundary}--\r\n`;
  return Buffer.from(text, 'latin1');
}

/** Party types of the test world. */
const WORLD_TYPES = [1, 2, 3, 5, 7, 13, 14] as const;

function callers(operation: Operation): { valid: fc.Arbitrary<Caller>; other: fc.Arbitrary<Caller> } {
  const garbage = fc.oneof(
    fc.constantFrom(
      'Bearer',
      'Bearer ',
      'Bearer a.b.c',
      'Basic dXNlcjpwYXNz',
      'bearer x',
      'Bearer ..',
      'Digest x',
      ' ',
    ),
    latin1Text(80).map((text) => `Bearer ${text}`),
    fc.constant(`Bearer ${'a'.repeat(4000)}.${'b'.repeat(100)}.c`),
  );
  const other = fc.oneof(
    fc.constant<Caller>({ kind: 'none' }),
    garbage.map((header): Caller => ({ kind: 'garbage', header })),
    fc
      .constantFrom(...WORLD_TYPES)
      .map((partyType): Caller => ({ kind: 'party', partyType, holder: 'bare' })),
    fc
      .constantFrom(...WORLD_TYPES)
      .map((partyType): Caller => ({ kind: 'party', partyType, holder: 'full' })),
  );
  if (operation.auth === 'public') return { valid: fc.constant({ kind: 'none' }), other };
  const allowed = operation.auth.allow.filter((type) => (WORLD_TYPES as readonly number[]).includes(type));
  const valid = fc.tuple(fc.constantFrom(...allowed), fc.boolean()).map(([partyType, other]): Caller => ({
    kind: 'party',
    partyType,
    holder: 'full',
    other: other || undefined,
  }));
  return { valid, other };
}

/** Requests for `operation`: schema-valid ones and hostile ones, about two to three. */
export function caseArbitrary(operation: Operation, context: ValueContext): fc.Arbitrary<FuzzCase> {
  const validPath = fc.tuple(...operation.pathParams.map((p) => validPathValue(p, context)));
  const hostilePath = fc.tuple(
    ...operation.pathParams.map((p) => fc.oneof(validPathValue(p, context), hostilePathValue)),
  );
  const body = operation.body
    ? operation.body.mediaType === 'multipart/form-data'
      ? multipartBody(operation, context)
      : jsonBody(operation, context)
    : undefined;
  const contentType = (valid: boolean) =>
    operation.body?.mediaType === 'multipart/form-data'
      ? valid
        ? undefined
        : fc.option(
            fc.constantFrom(
              'multipart/form-data',
              'multipart/form-data; boundary=',
              'multipart/form-data; boundary=other',
              'multipart/mixed; boundary=b',
              'application/json',
              'text/plain',
            ),
            { freq: 4, nil: undefined },
          )
      : valid
        ? fc.constantFrom('application/json', 'application/json; charset=utf-8', 'Application/JSON')
        : fc.oneof(
            { arbitrary: fc.constant('application/json'), weight: 6 },
            { arbitrary: fc.constantFrom(...CONTENT_TYPES), weight: 2 },
            { arbitrary: latin1Text(40), weight: 1 },
          );
  const who = callers(operation);
  const validAccept = operation.textual
    ? fc.constantFrom(undefined, 'application/json', 'text/plain', 'text/json', '*/*')
    : fc.constantFrom(undefined, 'application/json', '*/*');

  const validCase: fc.Arbitrary<FuzzCase> = fc
    .record({
      pathValues: validPath,
      query: validQuery(operation, context),
      caller: who.valid,
      body: body ? body.valid : fc.constant(undefined),
      contentType: contentType(true) ?? fc.constant(undefined),
      accept: validAccept,
      apiVersion: fc.constantFrom(undefined, '1', '1.0', '2', '2.0'),
    })
    .map(({ pathValues, query, caller, body, contentType, accept, apiVersion }) => ({
      kind: 'valid' as const,
      pathValues,
      query,
      caller,
      body,
      chunked: false,
      headers: {
        ...(contentType && body ? { 'content-type': contentType } : {}),
        ...(accept ? { accept } : {}),
        ...(apiVersion ? { 'api-version': apiVersion } : {}),
      },
    }));

  // on the hostile side each part is hostile at its own rate, so most requests still pass the
  // earlier checks and reach the one under attack
  const some = <T>(validPart: fc.Arbitrary<T>, hostilePart: fc.Arbitrary<T>, hostileWeight = 1) =>
    fc.oneof({ arbitrary: validPart, weight: 2 }, { arbitrary: hostilePart, weight: hostileWeight });
  const hostileCase: fc.Arbitrary<FuzzCase> = fc
    .record({
      pathValues: operation.pathParams.length ? some(validPath, hostilePath, 2) : validPath,
      query: operation.queryParams.length
        ? some(validQuery(operation, context), hostileQuery(operation, context))
        : fc.constant(''),
      caller: fc.oneof({ arbitrary: who.valid, weight: 8 }, { arbitrary: who.other, weight: 1 }),
      body: body
        ? fc.oneof({ arbitrary: body.hostile, weight: 4 }, { arbitrary: body.valid, weight: 1 })
        : fc.option(fc.constantFrom<Body>(...INVALID_JSON_BODIES), { freq: 10, nil: undefined }),
      contentType: contentType(false) ?? fc.constant(undefined),
      headers: fc.oneof({ arbitrary: fc.constant({}), weight: 3 }, { arbitrary: hostileHeaders, weight: 1 }),
      chunked: fc.boolean(),
    })
    .map(({ pathValues, query, caller, body, contentType, headers, chunked }) => ({
      kind: 'hostile' as const,
      pathValues,
      query,
      caller,
      body,
      chunked: chunked && body !== undefined,
      headers: { ...(contentType !== undefined && body ? { 'content-type': contentType } : {}), ...headers },
    }));

  return fc.oneof({ arbitrary: validCase, weight: 2 }, { arbitrary: hostileCase, weight: 3 });
}

/** The request of `fuzzCase`; `authorization` answers the header of its caller. */
export function renderCase(
  operation: Operation,
  fuzzCase: FuzzCase,
  authorization: (caller: Caller) => string | undefined,
): RawRequest {
  let index = 0;
  const path = operation.path.replace(/\{[^}]+\}/g, () => fuzzCase.pathValues[index++] ?? '');
  const headers: Record<string, string | string[]> = { ...fuzzCase.headers };
  const auth = authorization(fuzzCase.caller);
  if (auth !== undefined) headers.authorization = auth;
  let body: Buffer | undefined;
  if (fuzzCase.body?.kind === 'json') body = Buffer.from(jsonText(fuzzCase.body.value), 'utf8');
  else if (fuzzCase.body?.kind === 'bytes') body = fuzzCase.body.make();
  else if (fuzzCase.body?.kind === 'multipart') {
    body = multipartBytes(fuzzCase.body);
    headers['content-type'] ??= `multipart/form-data; boundary=${fuzzCase.body.boundary}`;
  }
  if (body && headers['content-type'] === undefined && operation.body?.mediaType !== 'multipart/form-data') {
    headers['content-type'] = 'application/json';
  }
  return {
    method: operation.method.toUpperCase(),
    path: fuzzCase.query ? `${path}?${fuzzCase.query}` : path,
    headers,
    body,
    chunked: fuzzCase.chunked,
  };
}

/**
 * The largest requests, sent once to every operation that takes a body, by a caller it allows:
 * BOUNDARY_BODIES, and for an upload a file part past the 10 MiB limit.
 */
export function boundaryCases(operation: Operation): FuzzCase[] {
  if (!operation.body) return [];
  const caller: Caller =
    operation.auth === 'public'
      ? { kind: 'none' }
      : { kind: 'party', partyType: operation.auth.allow[0] ?? 1, holder: 'full' };
  const bodies: Body[] = [...BOUNDARY_BODIES];
  if (operation.body.mediaType === 'multipart/form-data') {
    bodies.push({
      kind: 'multipart',
      boundary: 'boundary',
      parts: [
        {
          name: 'file',
          fileName: 'big.bin',
          contentType: 'application/octet-stream',
          content: 'x'.repeat(11 * 1024 * 1024),
        },
      ],
      tail: '',
    });
  }
  return bodies.map((body) => ({
    kind: 'hostile',
    pathValues: operation.pathParams.map(() => '1'),
    query: '',
    headers: {},
    caller,
    body,
    chunked: false,
  }));
}
