/**
 * Hostile values for the fuzz run: wrong types, boundary numbers, unicode, SQL and path-traversal
 * strings, deep and oversized JSON.
 */
import fc from 'fast-check';
import { JsonMembers, RawJson, type JsonValue } from './json-text';

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
export const NUMBER_TEXTS = [
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
export const anyCodeUnit = fc.integer({ min: 0, max: 0xffff }).map((code) => String.fromCharCode(code));
/** Printable Latin-1, the only text HTTP/1.1 header values may carry here. */
export const latin1 = fc
  .integer({ min: 0x20, max: 0xff })
  .filter((code) => code !== 0x7f)
  .map((code) => String.fromCharCode(code));

export const hostileText: fc.Arbitrary<string> = fc.oneof(
  fc.constantFrom(...SQL_STRINGS, ...TRAVERSAL_STRINGS, ...UNICODE_STRINGS, ...NUMBER_TEXTS),
  fc.string({ unit: anyCodeUnit, maxLength: 40 }),
  fc.string({ unit: 'grapheme', maxLength: 40 }),
  fc.string({ unit: 'binary', maxLength: 40 }),
  fc.constantFrom(300, 5_000).map((length) => 'x'.repeat(length)),
);

/** Keys a hostile object uses: unknown names, prototype names, case twins of real fields. */
export const hostileKey = fc.oneof(
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
export const deepArrays = (depth: number) =>
  kept(`[] nested ${depth} deep`, () => '['.repeat(depth) + ']'.repeat(depth));
export const deepObjects = (depth: number) =>
  kept(`{} nested ${depth} deep`, () => '{"a":'.repeat(depth) + '1' + '}'.repeat(depth));
export const hugeString = (bytes: number) =>
  kept(`a string of ${bytes} bytes`, () => JSON.stringify('€'.repeat(Math.ceil(bytes / 3))));
export const hugeIdList = (count: number) =>
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
