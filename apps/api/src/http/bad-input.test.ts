/**
 * Bad input of every kind, through the real API over HTTP and Postgres: each is a 4xx
 * ProblemDetails naming what is wrong, never a 5xx, and writes nothing.
 */
import { gzipSync } from 'node:zlib';
import { PartyType } from '@platform/shared';
import { afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { buildAccount, buildParty, login, TEST_PASSWORD, useTestApi } from '../../tests/support/api';
import { expectProblem, postRaw, rawRequest, writableCounts } from '../../tests/support/http';

/** A constant, as the it.each tables are built before beforeAll runs. */
const email = 'admin@platform.example';
const { api } = useTestApi();
let token: string;
let accountId: number;

beforeAll(async () => {
  const party = await buildParty(api.deps, { type: PartyType.Admin, name: 'Platform' });
  ({ id: accountId } = await buildAccount(api.deps, { partyId: party.id, email }));
  ({ accessToken: token } = await login(api, email));
});

// every refused request below must leave the database as it found it
let before: Record<string, number>;
beforeEach(async () => {
  before = await writableCounts(api);
});
afterEach(async () => {
  expect(await writableCounts(api)).toEqual(before);
});

const BODY_ROUTES = [
  ['login', '/api/auth/login', false],
  ['refresh', '/api/auth/refresh', false],
  ['batch', '/api/accounts/batch', true],
  ['search', '/api/accounts/search', true],
] as const;

describe('bodies that are not JSON objects', () => {
  const notJson: [string, string][] = [
    ['an unterminated object', '{"ids":[1]'],
    ['a trailing comma', '{"ids":[1,]}'],
    ['single quotes', "{'ids':[1]}"],
    ['NaN', '{"ids":[NaN]}'],
    ['a leading zero', '{"ids":[01]}'],
    ['trailing data', '{"ids":[1]} {"ids":[2]}'],
    ['a comment', '{"ids":[1] /* hi */}'],
    ['an unquoted key', '{ids:[1]}'],
    ['a raw control character in a string', '{"email":"a\u0001b"}'],
    ['a truncated unicode escape', '{"email":"\\u12"}'],
  ];

  it.each(BODY_ROUTES)('%s: malformed JSON is a 400 saying so', async (_name, path, auth) => {
    for (const [label, body] of notJson) {
      const response = await postRaw(api, path, body, auth ? { token } : {});
      const problem = await expectProblem(response, 400, { instance: path });
      expect(problem.detail, label).toMatch(/^The request body is not valid JSON \(.+\)$/);
      expect(problem.title).toBe('Bad request');
    }
  });

  it.each(BODY_ROUTES)(
    '%s: a JSON string, number, boolean or null is refused as not an object',
    async (_n, path, auth) => {
      for (const body of ['"abc"', '42', '1e308', 'true', 'null', '   ']) {
        const response = await postRaw(api, path, body, auth ? { token } : {});
        await expectProblem(response, 400, { detail: 'The request body must be a JSON object' });
      }
    },
  );

  it.each(BODY_ROUTES)('%s: a JSON array is refused naming the body', async (_n, path, auth) => {
    for (const body of ['[]', '[{"ids":[1]}]', '[[[]]]']) {
      const response = await postRaw(api, path, body, auth ? { token } : {});
      await expectProblem(response, 400, {
        errors: { '(body)': ['Invalid input: expected object, received array'] },
      });
    }
  });

  it.each(BODY_ROUTES)('%s: an empty body is refused as missing', async (_n, path, auth) => {
    const headers: Record<string, string> = auth ? { authorization: `Bearer ${token}` } : {};
    const noBody = await api.fetch(path, {
      method: 'POST',
      headers: { ...headers, 'content-type': 'application/json' },
    });
    await expectProblem(noBody, 400, {
      detail: 'The request needs a JSON body',
      errors: { '(body)': ['Required'] },
    });

    const chunked = await rawRequest(api, {
      method: 'POST',
      path,
      headers: { ...headers, 'content-type': 'application/json', 'transfer-encoding': 'chunked' },
    });
    expect(chunked.status).toBe(400);
    expect(chunked.headers['content-type']).toBe('application/problem+json');
    expect(JSON.parse(chunked.text)).toMatchObject({
      status: 400,
      detail: 'The request needs a JSON body',
      errors: { '(body)': ['Required'] },
    });
  });
});

describe('login refuses bad input before it counts a rate-limit hit', () => {
  const loginWith = (body: unknown) => api.fetch('/api/auth/login', { method: 'POST', json: body });

  it.each([
    ['an empty object', {}, { email: ['Required'], password: ['Required'] }],
    [
      'wrong types',
      { email: 5, password: true },
      {
        email: ['Invalid input: expected string, received number'],
        password: ['Invalid input: expected string, received boolean'],
      },
    ],
    [
      'null fields',
      { email: null, password: null },
      { email: [expect.any(String)], password: [expect.any(String)] },
    ],
    ['an object for the email', { email: { $gt: '' }, password: 'x' }, { email: [expect.any(String)] }],
    ['a list for the email', { email: [email], password: 'x' }, { email: [expect.any(String)] }],
    ['an empty email', { email: '', password: 'x' }, { email: [expect.any(String)] }],
    ['a blank email', { email: '   ', password: 'x' }, { email: [expect.any(String)] }],
    [
      'an over-long email',
      { email: `${'a'.repeat(300)}@x.example`, password: 'x' },
      { email: [expect.any(String)] },
    ],
    ['an over-long password', { email, password: 'p'.repeat(201) }, { password: [expect.any(String)] }],
    [
      '1e308 for a flag',
      { email, password: 'x', skipMultiFactorAuthentication: 1e308 },
      { skipMultiFactorAuthentication: [expect.any(String)] },
    ],
    [
      'a string for a flag',
      { email, password: 'x', skipMultiFactorAuthentication: 'true' },
      { skipMultiFactorAuthentication: [expect.any(String)] },
    ],
    [
      'unknown fields, each named',
      { email, password: TEST_PASSWORD, admin: true, role: 1, 'party.id': 3 },
      { admin: ['Unknown field'], role: ['Unknown field'], 'party.id': ['Unknown field'] },
    ],
    [
      'a field given twice in two spellings',
      { email, Email: 'other@x.example', password: TEST_PASSWORD },
      { email: ['Given more than once (as "email", "Email"); names match case-insensitively'] },
    ],
    [
      'a field given three times',
      { PASSWORD: 'a', password: 'b', Password: 'c', email },
      {
        password: [
          'Given more than once (as "PASSWORD", "password", "Password"); names match case-insensitively',
        ],
      },
    ],
    [
      'a NUL byte in the email',
      { email: `${email}\u0000`, password: 'x' },
      { email: ['must not contain NUL characters'] },
    ],
    [
      'a NUL byte in the password',
      { email, password: 'a\u0000b' },
      { password: ['must not contain NUL characters'] },
    ],
    [
      'a lone surrogate',
      { email: `${email}\ud800`, password: 'x' },
      { email: ['must be well-formed Unicode'] },
    ],
  ])('%s', async (_label, body, errors) => {
    await expectProblem(await loginWith(body), 400, { errors });
  });

  it('logs in with names in any case, so the refusals above are about the input alone', async () => {
    const response = await loginWith({ EMAIL: email, Password: TEST_PASSWORD });
    expect(response.status).toBe(200);
    expect(await response.json()).toEqual({
      accessToken: expect.any(String),
      refreshToken: expect.any(String),
    });
    // this one did write: a refresh token and rate-limit hits
    before = await writableCounts(api);
  });
});

describe('numbers', () => {
  const batch = (raw: string) => postRaw(api, '/api/accounts/batch', raw, { token });

  it.each([
    ['1e308', '{"ids":[1e308]}'],
    ['1e400 (Infinity once parsed)', '{"ids":[1e400]}'],
    ['2^31', '{"ids":[2147483648]}'],
    ['2^53 + 1', '{"ids":[9007199254740993]}'],
    ['-0.5', '{"ids":[-0.5]}'],
    ['a tiny fraction', '{"ids":[1.0000000000000002]}'],
    ['-2^31', '{"ids":[-2147483648]}'],
  ])('refuses %s as an id', async (_label, raw) => {
    await expectProblem(await batch(raw), 400, { errors: { 'ids.0': expect.any(Array) } });
  });

  it('takes 2^31 - 1 and 1.0 (the same number as 1 in JSON)', async () => {
    const response = await batch(`{"ids":[2147483647, ${accountId}.0]}`);
    expect(response.status).toBe(200);
    expect(await response.json()).toEqual([expect.objectContaining({ id: accountId })]);
  });
});

describe('deep nesting', () => {
  const nested = (depth: number, leaf = '1') => `${'['.repeat(depth)}${leaf}${']'.repeat(depth)}`;
  const nestedObject = (depth: number) => `${'{"a":'.repeat(depth)}1${'}'.repeat(depth)}`;

  it.each([
    ['10,000 levels in a known field', `{"ids":${nested(10_000)}}`, 'ids.0'],
    ['10,000 levels of objects in an unknown field', `{"ids":[1],"x":${nestedObject(10_000)}}`, 'x'],
    ['200,000 levels in an unknown field', `{"ids":[1],"x":${nested(200_000)}}`, 'x'],
  ])('refuses %s with a 400, not a stack overflow', async (_label, body, field) => {
    const problem = await expectProblem(await postRaw(api, '/api/accounts/batch', body, { token }), 400);
    expect(problem.errors?.[field]).toBeDefined();
  });

  it('refuses 10,000 levels inside a search value', async () => {
    const body = `{"filters":[{"attribute":"email","operator":"in","value":${nested(10_000, '"x"')}}]}`;
    const problem = await expectProblem(await postRaw(api, '/api/accounts/search', body, { token }), 400);
    expect(Object.keys(problem.errors!)).toContain('filters.0.value');
  });

  it('refuses nesting past 32 levels even where a schema would not look', async () => {
    const body = `{"ids":[1],"x":${nested(40)}}`;
    await expectProblem(await postRaw(api, '/api/accounts/batch', body, { token }), 400, {
      errors: {
        x: ['Unknown field'],
        [`x${'.0'.repeat(31)}`]: ['is nested more than 32 levels deep'],
      },
    });
  });
});

describe('long lists and many keys', () => {
  it('refuses half a million ids with a 400, not a stack overflow', async () => {
    const body = `{"ids":[${Array<string>(500_000).fill('1').join(',')}]}`;
    await expectProblem(await postRaw(api, '/api/accounts/batch', body, { token }), 400, {
      errors: { ids: ['Too big: expected array to have <=100 items'] },
    });
  });

  it('refuses sixty thousand unknown keys with a 400', async () => {
    const keys = Array.from({ length: 60_000 }, (_, i) => `"k${i}":0`).join(',');
    const problem = await expectProblem(
      await postRaw(api, '/api/accounts/batch', `{"ids":[1],${keys}}`, { token }),
      400,
    );
    expect(problem.errors?.k59999).toEqual(['Unknown field']);
  });
});

describe('strings: unicode, NUL and surrogates', () => {
  const searchEmail = (value: string) =>
    api.fetch('/api/accounts/search', {
      method: 'POST',
      token,
      json: { filters: [{ attribute: 'email', operator: 'contains', value }] },
    });

  it.each([
    ['NUL', 'a\u0000b'],
    ['only NUL', '\u0000'],
  ])('refuses %s in a filter value', async (_l, value) => {
    await expectProblem(await searchEmail(value), 400, {
      errors: { 'filters.0.value': ['must not contain NUL characters'] },
    });
  });

  it('refuses a lone surrogate, high or low', async () => {
    for (const escaped of ['\\ud800', '\\udfff', 'a\\ud83d']) {
      const body = `{"filters":[{"attribute":"email","operator":"eq","value":"${escaped}"}]}`;
      await expectProblem(await postRaw(api, '/api/accounts/search', body, { token }), 400, {
        errors: { 'filters.0.value': ['must be well-formed Unicode'] },
      });
    }
  });

  it('names a NUL inside a list value by its index', async () => {
    const response = await api.fetch('/api/accounts/search', {
      method: 'POST',
      token,
      json: { filters: [{ attribute: 'email', operator: 'in', value: ['ok@x.example', 'bad\u0000'] }] },
    });
    await expectProblem(response, 400, {
      errors: { 'filters.0.value.1': ['must not contain NUL characters'] },
    });
  });

  it.each([
    ['emoji', '😀'],
    ['CJK', '東京'],
    ['right-to-left', 'שלום'],
    ['combining marks', 'e\u0301'],
    ['a zero-width joiner', '\u200d'],
    ['an escaped pair', '\ud83d\ude00'],
  ])('searches %s as an ordinary value', async (_label, value) => {
    const response = await searchEmail(value);
    expect(response.status).toBe(200);
    expect(await response.json()).toMatchObject({ items: [], totalCount: 0 });
  });
});

describe('keys that mean something to JavaScript', () => {
  it.each([['constructor'], ['toString'], ['hasOwnProperty'], ['__defineGetter__'], ['valueOf']])(
    'refuses %s as an unknown field of a body and of a query',
    async (key) => {
      const body = await postRaw(api, '/api/accounts/batch', `{"ids":[1],"${key}":{"prototype":{"x":1}}}`, {
        token,
      });
      await expectProblem(body, 400, { errors: { [key]: ['Unknown field'] } });
      const query = await api.fetch(`/api/accounts?${key}=1`, { token });
      await expectProblem(query, 400, { errors: { [key]: ['Unknown field'] } });
    },
  );

  it('refuses __proto__ in a body, and pollutes nothing', async () => {
    const response = await postRaw(api, '/api/accounts/batch', '{"ids":[1],"__proto__":{"polluted":true}}', {
      token,
    });
    await expectProblem(response, 400, { detail: /^The request body is not valid JSON \(.*prototype/ });
    const escaped = await postRaw(
      api,
      '/api/accounts/batch',
      '{"ids":[1],"\\u005f_proto__":{"polluted":true}}',
      {
        token,
      },
    );
    await expectProblem(escaped, 400);
    expect(({} as Record<string, unknown>).polluted).toBeUndefined();
  });

  it('refuses __proto__ in a query, and pollutes nothing', async () => {
    const response = await api.fetch('/api/accounts?__proto__=1&__proto__[polluted]=1', { token });
    await expectProblem(response, 400, {
      errors: { ['__proto__']: ['Unknown field'], '__proto__[polluted]': ['Unknown field'] },
    });
    expect(({} as Record<string, unknown>).polluted).toBeUndefined();
  });
});

describe('duplicate keys differing in case', () => {
  it('refuses them at the top level and in nested objects', async () => {
    const top = await api.fetch('/api/accounts/search', {
      method: 'POST',
      token,
      json: { filters: [], Filters: [] },
    });
    await expectProblem(top, 400, {
      errors: { filters: ['Given more than once (as "filters", "Filters"); names match case-insensitively'] },
    });
    const nested = await api.fetch('/api/accounts/search', {
      method: 'POST',
      token,
      json: { filters: [{ attribute: 'id', Attribute: 'email', operator: 'eq', value: 1 }] },
    });
    await expectProblem(nested, 400, {
      errors: {
        'filters.0.attribute': [
          'Given more than once (as "attribute", "Attribute"); names match case-insensitively',
        ],
      },
    });
  });

  it('refuses them in a query string', async () => {
    const response = await api.fetch('/api/accounts?AscendingOrder=true&ascendingorder=false', { token });
    await expectProblem(response, 400, {
      errors: {
        AscendingOrder: [
          'Given more than once (as "AscendingOrder", "ascendingorder"); names match case-insensitively',
        ],
      },
    });
  });
});

describe('path parameters', () => {
  it.each([
    ['abc', 'must be a whole number'],
    ['1.5', 'must be a whole number'],
    ['-1', 'must be a whole number'],
    ['0', 'must be at least 1'],
    ['2147483648', 'must fit in 32 bits'],
    ['99999999999999999999999', 'must fit in 32 bits'],
    ['0x10', 'must be a whole number'],
    ['1e1', 'must be a whole number'],
    ['%201', 'must be a whole number'],
    ['1%20', 'must be a whole number'],
    ['%00', ['must be a whole number', 'must not contain NUL characters']],
    ['%EF%BC%91', 'must be a whole number'], // fullwidth digit one
    ['Infinity', 'must be a whole number'],
  ])('refuses /api/accounts/%s with a 400 naming id', async (id, message) => {
    const response = await api.fetch(`/api/accounts/${id}`, { token });
    const messages = Array.isArray(message) ? message : [message];
    await expectProblem(response, 400, { detail: 'Invalid path parameters: id', errors: { id: messages } });
  });

  it('reads a plain id, leading zeros and all', async () => {
    const response = await api.fetch(`/api/accounts/00${accountId}`, { token });
    expect(response.status).toBe(200);
    expect(await response.json()).toMatchObject({ id: accountId, email });
  });
});

describe('encodings and sizes', () => {
  const compressed = (text: string) =>
    rawRequest(api, {
      method: 'POST',
      path: '/api/accounts/batch',
      headers: {
        authorization: `Bearer ${token}`,
        'content-type': 'application/json',
        'content-encoding': 'gzip',
        'content-length': String(gzipSync(text).length),
      },
      chunks: [gzipSync(text)],
    });

  it('reads a gzip body', async () => {
    const response = await compressed(JSON.stringify({ ids: [accountId] }));
    expect(response.status).toBe(200);
    expect(JSON.parse(response.text)).toEqual([expect.objectContaining({ id: accountId })]);
  });

  it('refuses a gzip body that is not gzip with a 400', async () => {
    const response = await postRaw(api, '/api/accounts/batch', '{"ids":[1]}', {
      token,
      headers: { 'content-encoding': 'gzip' },
    });
    await expectProblem(response, 400, { detail: 'The request body could not be read' });
  });

  it('refuses an unknown content encoding with a 415', async () => {
    const response = await postRaw(api, '/api/accounts/batch', '{"ids":[1]}', {
      token,
      headers: { 'content-encoding': 'zstd-nope' },
    });
    await expectProblem(response, 415, {
      detail: 'The request body cannot be decoded: Unsupported Content-Encoding: zstd-nope',
    });
  });

  it('measures the limit after decompression: a small gzip bomb is a 413', async () => {
    const response = await compressed(`{"ids":[1]${' '.repeat(3 * 1024 * 1024)}}`);
    expect(response.status).toBe(413);
    expect(JSON.parse(response.text)).toMatchObject({ status: 413, detail: 'The request body is too large' });
  });

  it('refuses a body over the 1 MB default with a 413', async () => {
    const body = JSON.stringify({ filters: [], pad: 'x'.repeat(1024 * 1024) });
    await expectProblem(await postRaw(api, '/api/accounts/search', body, { token }), 413);
  });

  it('refuses an over-long unknown key by name, without echoing more than it was sent', async () => {
    const key = 'k'.repeat(5000);
    const response = await api.fetch('/api/accounts/batch', {
      method: 'POST',
      token,
      json: { ids: [1], [key]: 1 },
    });
    await expectProblem(response, 400, { errors: { [key]: ['Unknown field'] } });
  });
});

describe('no input ever causes a 5xx', () => {
  const oddBodies = [
    '{}',
    '{"":1}',
    '{"ids":{}}',
    '{"filters":[null]}',
    '{"filters":[[]]}',
    '{"filters":[{"attribute":null,"operator":null}]}',
    '{"filters":[{"attribute":"created","operator":"in","value":["2025-13-01"]}]}',
    '{"filters":[{"attribute":"created","operator":"eq","value":"2025-01-01T00:00:00+99:00"}]}',
    '{"sort":[{"attribute":"id","ascending":null}]}',
    '{"email":"a@b.c","password":"x","skipMultiFactorAuthentication":null}',
    '{"refreshToken":""}',
    '{"refreshToken":"a.b.c"}',
    '{"refreshToken":["a"]}',
    `{"refreshToken":"${'x'.repeat(5000)}"}`,
    '{"ids":[1],"ids":[2]}',
    '{"\\u0000":1}',
    '\ufeff{"ids":[1]}',
  ];

  it.each(BODY_ROUTES)(
    '%s answers each odd body with a 4xx ProblemDetails or a 200',
    async (_n, path, auth) => {
      for (const body of oddBodies) {
        const response = await postRaw(api, path, body, auth ? { token } : {});
        const text = await response.text();
        expect(response.status, `${body.slice(0, 80)} → ${text}`).toBeLessThan(500);
        if (response.status === 200) continue;
        if (response.status === 401) {
          expect(text).toBe('');
          continue;
        }
        expect(response.headers.get('content-type')).toBe('application/problem+json');
        expect(JSON.parse(text)).toMatchObject({ status: response.status, type: expect.any(String) });
      }
    },
  );
});
