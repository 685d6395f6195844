/**
 * What the fuzz run sends: per operation of the OpenAPI document, fast-check arbitraries of
 * requests, from schema-valid ones to hostile ones (hostile parts, garbage headers, other
 * callers), and the boundary cases every operation gets once.
 */
import fc from 'fast-check';
import type { Operation, Parameter, Schema } from './fuzz-document';
import {
  anyCodeUnit,
  deepArrays,
  deepObjects,
  hostileKey,
  hostileText,
  hostileValue,
  hugeIdList,
  hugeString,
  latin1,
  NUMBER_TEXTS,
  SQL_STRINGS,
  TRAVERSAL_STRINGS,
  UNICODE_STRINGS,
} from './fuzz-hostile-values';
import { resolveRef, validValue, type ValueContext } from './fuzz-valid-values';
import { JsonMembers, RawJson, jsonText, type JsonValue } from './json-text';
import { percentEncode, type RawRequest } from './raw-http';

/** Who sends a request: a party of the test world by type, with or without permissions. */
export type Caller =
  | { kind: 'party'; partyType: number; holder: 'full' | 'bare'; other?: boolean }
  | { kind: 'none' }
  | { kind: 'garbage'; header: string }
  /** The token of an endpoint-portal session of the PMC granted every action (docs/portal.md). */
  | { kind: 'portal' };

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
    // a portal token, on every operation: refused by all but the portal's routes
    fc.constant<Caller>({ kind: 'portal' }),
  );
  if (operation.auth === 'public') return { valid: fc.constant({ kind: 'none' }), other };
  const portal = fc.constant<Caller>({ kind: 'portal' });
  if (operation.auth.portalOnly) return { valid: portal, other };
  const allowed = operation.auth.allow.filter((type) => (WORLD_TYPES as readonly number[]).includes(type));
  const valid = fc.tuple(fc.constantFrom(...allowed), fc.boolean()).map(([partyType, other]): Caller => ({
    kind: 'party',
    partyType,
    holder: 'full',
    other: other || undefined,
  }));
  return { valid: operation.auth.portal ? fc.oneof(valid, portal) : valid, other };
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
      : operation.auth.portalOnly
        ? { kind: 'portal' }
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
