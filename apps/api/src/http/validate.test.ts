import { IdList } from '@platform/shared';
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { AppError } from './errors';
import { buildOpenApiDocument } from './openapi';
import { defineRoute } from './route';
import { PageQuery } from './pagination';
import {
  issuesToFieldErrors,
  normalizeKeys,
  parseInput,
  pathId,
  textProblems,
  wholeNumberText,
  type KeyClash,
} from './validate';

const Nested = z.strictObject({
  shouldGroup: z.boolean(),
  items: z.array(z.strictObject({ targetUrl: z.string() })).optional(),
  inner: z.strictObject({ camelCase: z.number() }).nullable().default(null),
});

/** The AppError `run` throws (failing the test when it does not throw one). */
function refusal(run: () => unknown): AppError {
  try {
    run();
  } catch (error) {
    if (error instanceof AppError) return error;
    throw error;
  }
  throw new Error('expected a refusal');
}

describe('normalizeKeys', () => {
  it('renames keys to the schema’s spelling, through arrays and wrappers', () => {
    expect(
      normalizeKeys(Nested, {
        ShouldGroup: true,
        ITEMS: [{ targeturl: 'a' }, { TargetUrl: 'b' }],
        Inner: { CAMELCASE: 1 },
      }),
    ).toEqual({
      shouldGroup: true,
      items: [{ targetUrl: 'a' }, { targetUrl: 'b' }],
      inner: { camelCase: 1 },
    });
    expect(normalizeKeys(PageQuery, { pagesize: '5', PAGENUMBER: '2' })).toEqual({
      PageSize: '5',
      PageNumber: '2',
    });
  });

  it('keeps unknown keys, so a strict schema still names them', () => {
    expect(normalizeKeys(Nested, { shouldGroup: true, Extra: 1 })).toEqual({ shouldGroup: true, Extra: 1 });
  });

  it('leaves values that are not objects alone', () => {
    for (const value of [null, 1, 'x', [1], undefined]) expect(normalizeKeys(Nested, value)).toEqual(value);
  });

  it('reports a field given in two spellings, with its path, keeping the first', () => {
    const clashes: KeyClash[] = [];
    const result = normalizeKeys(
      Nested,
      { shouldGroup: true, ShouldGroup: false, items: [{ targetUrl: 'a', TARGETURL: 'b' }] },
      clashes,
    );
    expect(result).toEqual({ shouldGroup: true, items: [{ targetUrl: 'a' }] });
    expect(clashes).toEqual([
      { path: ['items', 0, 'targetUrl'], keys: ['targetUrl', 'TARGETURL'] },
      { path: ['shouldGroup'], keys: ['shouldGroup', 'ShouldGroup'] },
    ]);
  });

  it('does not take Object.prototype’s members for fields', () => {
    const input = JSON.parse(
      '{"constructor":1,"toString":2,"__proto__":{"x":1},"shouldGroup":true}',
    ) as object;
    const result = normalizeKeys(Nested, input) as Record<string, unknown>;
    expect(Object.keys(result)).toEqual(['constructor', 'toString', '__proto__', 'shouldGroup']);
    expect(Object.getPrototypeOf(result)).toBe(Object.prototype);
  });
});

describe('issuesToFieldErrors', () => {
  it('names unknown keys one by one, under their parent’s path', () => {
    const result = Nested.safeParse({ shouldGroup: true, a: 1, items: [{ targetUrl: 'x', b: 2 }] });
    expect(issuesToFieldErrors(result.error!.issues)).toEqual({
      a: ['Unknown field'],
      'items.0.b': ['Unknown field'],
    });
  });

  it('says Required for a missing field and the type error for a wrong type (with reportInput)', () => {
    const result = Nested.safeParse({ items: [{ targetUrl: 5 }] }, { reportInput: true });
    expect(issuesToFieldErrors(result.error!.issues)).toEqual({
      shouldGroup: ['Required'],
      'items.0.targetUrl': ['Invalid input: expected string, received number'],
    });
  });

  it('prefixes paths and names the whole body when the path is empty', () => {
    expect(issuesToFieldErrors(Nested.safeParse([], { reportInput: true }).error!.issues)).toEqual({
      '(body)': ['Invalid input: expected object, received array'],
    });
    expect(issuesToFieldErrors(Nested.safeParse({}, { reportInput: true }).error!.issues, 'patch')).toEqual({
      'patch.shouldGroup': ['Required'],
    });
  });

  it('keeps a field named like an Object.prototype member as an own, plain field', () => {
    const result = z.strictObject({}).safeParse(JSON.parse('{"constructor":1,"__proto__":2}'));
    const errors = issuesToFieldErrors(result.error!.issues);
    expect(Object.keys(errors)).toEqual(['constructor', '__proto__']);
    expect(errors.constructor).toEqual(['Unknown field']);
    expect(JSON.parse(JSON.stringify(errors))).toEqual(
      JSON.parse('{"constructor":["Unknown field"],"__proto__":["Unknown field"]}'),
    );
  });
});

describe('textProblems', () => {
  it('finds NUL characters and lone surrogates anywhere, by path', () => {
    expect(textProblems({ a: 'ok', b: ['x', 'y\u0000'], c: { d: '\ud800' }, e: '😀' })).toEqual([
      { path: ['b', 1], message: 'must not contain NUL characters' },
      { path: ['c', 'd'], message: 'must be well-formed Unicode' },
    ]);
  });

  it('stops at 32 levels without recursing', () => {
    let deep: unknown = 1;
    for (let i = 0; i < 100_000; i++) deep = [deep];
    expect(textProblems({ x: deep })).toEqual([
      { path: ['x', ...Array<number>(31).fill(0)], message: 'is nested more than 32 levels deep' },
    ]);
  });

  it('reports at most 20 problems', () => {
    expect(textProblems(Array.from({ length: 50 }, () => '\u0000'))).toHaveLength(20);
  });
});

describe('parseInput', () => {
  it('answers the parsed value', () => {
    expect(parseInput(IdList, { IDS: [1, 2] }, 'body')).toEqual({ ids: [1, 2] });
  });

  it('refuses with one 400 naming every problem: schema, spellings and text', () => {
    const error = refusal(() =>
      parseInput(
        Nested,
        { shouldGroup: 'yes', ShouldGroup: true, items: [{ targetUrl: 'a\u0000' }], x: 1 },
        'body',
      ),
    );
    expect(error.status).toBe(400);
    expect(error.errors).toEqual({
      shouldGroup: [
        'Invalid input: expected boolean, received string',
        'Given more than once (as "shouldGroup", "ShouldGroup"); names match case-insensitively',
      ],
      x: ['Unknown field'],
      'items.0.targetUrl': ['must not contain NUL characters'],
    });
    expect(error.detail).toBe('Invalid body: shouldGroup, x, items.0.targetUrl');
  });

  it('refuses a value the schema accepts when a string holds NUL', () => {
    const error = refusal(() =>
      parseInput(z.strictObject({ name: z.string() }), { name: 'a\u0000' }, 'body'),
    );
    expect(error.errors).toEqual({ name: ['must not contain NUL characters'] });
  });
});

describe('wholeNumberText and pathId', () => {
  const PageSize = wholeNumberText('PageSize', 1, 100, 20);

  it('takes decimal digits only', () => {
    expect(PageSize.parse('7')).toBe(7);
    expect(PageSize.parse('007')).toBe(7);
    expect(PageSize.parse(undefined)).toBe(20);
    expect(pathId.parse('2147483647')).toBe(2147483647);
    for (const text of ['', ' 7', '7 ', '0x10', '1e1', '7.0', '+7', '-7', '٣', 'Infinity', 'NaN']) {
      expect(PageSize.safeParse(text).success, text).toBe(false);
    }
  });

  it('words its refusals by the parameter', () => {
    const messages = (value: unknown) => PageSize.safeParse(value).error!.issues.map((i) => i.message);
    expect(messages('abc')).toEqual(['PageSize must be a whole number']);
    expect(messages('0')).toEqual(['PageSize must be at least 1']);
    expect(messages('101')).toEqual(['PageSize must be at most 100']);
    expect(messages(['1', '2'])).toEqual(['PageSize must be given once, not 2 times']);
    expect(pathId.safeParse('2147483648').error!.issues.map((i) => i.message)).toEqual([
      'must fit in 32 bits',
    ]);
  });

  it('is documented in OpenAPI as the integer it stands for', () => {
    const document = buildOpenApiDocument([
      defineRoute({
        method: 'get',
        path: '/api/things/:id',
        summary: 'A thing',
        tags: ['Test'],
        auth: 'public',
        params: z.strictObject({ id: pathId }),
        query: PageQuery,
        handler: () => undefined,
      }),
    ]);
    const parameters = (document.paths?.['/api/things/{id}']?.get?.parameters ?? []) as {
      name: string;
      schema: unknown;
    }[];
    const schemaOf = (name: string) => parameters.find((p) => p.name === name)?.schema;
    expect(schemaOf('id')).toEqual({ type: 'integer', minimum: 1, maximum: 2147483647 });
    expect(schemaOf('PageSize')).toEqual({ default: 20, type: 'integer', minimum: 1, maximum: 100 });
    expect(schemaOf('PageNumber')).toEqual({ default: 1, type: 'integer', minimum: 1, maximum: 1000000 });
  });
});
