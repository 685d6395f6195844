/**
 * The HTTP conventions of docs/decisions.md#api-conventions, proven against the real API
 * over HTTP and Postgres: headers, ProblemDetails for every error status, the bare 401, media
 * types and the request id. Collections (paging, sorting, search, batch, scope) are in
 * collections.test.ts; malformed input of every kind in bad-input.test.ts.
 */
import type { AddressInfo } from 'node:net';
import type { Server } from 'node:http';
import { PartyType } from '@platform/shared';
import { beforeAll, describe, expect, it } from 'vitest';
import { createApp } from '../app';
import { buildAccount, buildParty, login, useTestApi } from '../../tests/support/api';
import { AppError } from './errors';
import { defineRoute, type RouteDefinition } from './route';
import { expectProblem, expectUnauthenticated, postRaw } from '../../tests/support/http';

const { api } = useTestApi({ config: { BODY_LIMIT: '2kb' } });
let token: string;
let accountId: number;
let email: string;
let outOfScopeId: number;

beforeAll(async () => {
  const acme = await buildParty(api.deps, { type: PartyType.PropertyManagementCompany, name: 'Acme' });
  const other = await buildParty(api.deps, { type: PartyType.PropertyManagementCompany, name: 'Other' });
  ({ id: accountId, email } = await buildAccount(api.deps, { partyId: acme.id, email: 'boss@acme.example' }));
  ({ id: outOfScopeId } = await buildAccount(api.deps, { partyId: other.id, email: 'boss@other.example' }));
  ({ accessToken: token } = await login(api, email));
});

/** Serves `routes` through createApp (the real conventions) on a free port for `run`. */
async function withApp(routes: RouteDefinition[], run: (base: string) => Promise<void>): Promise<void> {
  const server: Server = createApp(api.deps, routes).listen(0, '127.0.0.1');
  await new Promise((resolve) => server.once('listening', resolve));
  try {
    await run(`http://127.0.0.1:${(server.address() as AddressInfo).port}`);
  } finally {
    server.closeAllConnections();
    await new Promise((resolve) => server.close(resolve));
  }
}

const myself = (headers: Record<string, string> = {}) =>
  api.fetch('/api/accounts/myself', { token, headers });

describe('api-version header', () => {
  it.each([
    ['absent', undefined],
    ['1', '1'],
    ['1.0', '1.0'],
    ['2', '2'],
    ['2.0', '2.0'],
    ['2.0 with surrounding spaces (HTTP optional whitespace)', '  2.0  '],
  ])('accepts %s', async (_label, version) => {
    const response = await myself(version === undefined ? {} : { 'api-version': version });
    expect(response.status).toBe(200);
    expect(response.headers.get('api-supported-versions')).toBe('1.0, 2.0');
    expect(await response.json()).toMatchObject({ id: accountId, email });
  });

  it.each([
    ['3', '3'],
    ['abc', 'abc'],
    ['2.1', '2.1'],
    ['1.0.0', '1.0.0'],
    ['v2', 'v2'],
    ['empty', ''],
    ['only spaces', '   '],
    ['two versions', '2, 2.0'],
  ])('refuses %s with a 400 naming api-version', async (_label, version) => {
    const response = await myself({ 'api-version': version });
    const problem = await expectProblem(response, 400, {
      instance: '/api/accounts/myself',
      errors: {
        'api-version': [expect.stringMatching(/^Unsupported api-version ".*"; use 1, 1\.0, 2 or 2\.0$/)],
      },
    });
    expect(problem.detail).toMatch(/^api-version: /);
    // the refusal still says which versions there are
    expect(response.headers.get('api-supported-versions')).toBe('1.0, 2.0');
  });

  it('is checked before authentication, so a client learns its version is wrong first', async () => {
    const response = await api.fetch('/api/accounts/myself', { headers: { 'api-version': '3' } });
    await expectProblem(response, 400, { errors: { 'api-version': [expect.any(String)] } });
  });

  it('is checked on paths spelled in another case, which the router also serves', async () => {
    const response = await api.fetch('/API/accounts/myself', { token, headers: { 'api-version': '3' } });
    await expectProblem(response, 400, { errors: { 'api-version': [expect.any(String)] } });
    const served = await api.fetch('/API/accounts/myself', { token });
    expect(served.status).toBe(200);
    expect(served.headers.get('content-language')).toBe('en-DE');
    expect(await served.json()).toMatchObject({ id: accountId });
  });
});

describe('Accept-Language: only en-DE is served, anything else falls back to it', () => {
  it.each([['en-DE'], ['de-DE'], ['fr-FR, de;q=0.8'], ['*'], ['garbage;;;q=x'], ['']])(
    'serves %j in en-DE',
    async (language) => {
      const response = await myself({ 'accept-language': language });
      expect(response.status).toBe(200);
      expect(response.headers.get('content-language')).toBe('en-DE');
      expect(await response.json()).toMatchObject({ id: accountId });
    },
  );

  it('is en-DE without the header, and on errors too', async () => {
    const response = await api.fetch('/api/accounts/999999', { token });
    expect(response.headers.get('content-language')).toBe('en-DE');
    await expectProblem(response, 404);
  });
});

describe('ProblemDetails (RFC 9457) for every error status', () => {
  it('404 for an unknown path, with or without a token', async () => {
    for (const init of [{}, { token }]) {
      const response = await api.fetch('/api/no-such-thing', init);
      await expectProblem(response, 404, {
        instance: '/api/no-such-thing',
        detail: 'No route for /api/no-such-thing',
      });
    }
  });

  it('404 for an account outside the caller’s scope, the same as for one that does not exist', async () => {
    const outside = await expectProblem(await api.fetch(`/api/accounts/${outOfScopeId}`, { token }), 404, {
      instance: `/api/accounts/${outOfScopeId}`,
      detail: `Account ${outOfScopeId} was not found`,
    });
    expect(outside.title).toBe('Not found');
    await expectProblem(await api.fetch('/api/accounts/2147483647', { token }), 404, {
      detail: 'Account 2147483647 was not found',
    });
  });

  it.each([
    ['DELETE', '/api/accounts', 'HEAD, GET, POST'],
    ['PUT', '/api/accounts/1', 'HEAD, GET, PATCH, DELETE'],
    ['GET', '/api/auth/login', 'POST'],
    ['DELETE', '/api/accounts/batch', 'POST, PATCH'],
    // literal paths beat `/api/accounts/:id`: these are the search and batch paths, not account "search"
    ['GET', '/api/accounts/search', 'POST'],
    ['GET', '/api/accounts/batch', 'POST, PATCH'],
  ])('405 with Allow for %s %s', async (method, path, allow) => {
    const response = await api.fetch(path, { method, token });
    expect(response.headers.get('allow')).toBe(allow);
    await expectProblem(response, 405, {
      instance: path,
      detail: `${method} is not supported on this path; use ${allow}`,
    });
  });

  it('405 also for a method no route implements', async () => {
    const response = await api.fetch('/api/accounts', { method: 'PROPFIND', token });
    expect(response.headers.get('allow')).toBe('HEAD, GET, POST');
    await expectProblem(response, 405);
  });

  it('405 for the meta routes too, and OPTIONS answers Allow alone', async () => {
    const post = await api.fetch('/api/openapi.json', { method: 'POST' });
    expect(post.headers.get('allow')).toBe('HEAD, GET');
    await expectProblem(post, 405, { detail: 'POST is not supported on this path; use HEAD, GET' });
    const options = await api.fetch('/api/accounts/batch', { method: 'OPTIONS' });
    expect(options.status).toBe(204);
    expect(options.headers.get('allow')).toBe('POST, PATCH');
    expect(await options.text()).toBe('');
  });

  it('a literal path still answers its own method, and /api/accounts/:id still reads ids', async () => {
    const mine = await api.fetch('/api/accounts/myself', { token });
    expect(mine.status).toBe(200);
    expect(await mine.json()).toMatchObject({ id: accountId });
    const byId = await api.fetch(`/api/accounts/${accountId}`, { token });
    expect(byId.status).toBe(200);
    expect(await byId.json()).toMatchObject({ id: accountId, email });
  });

  it('406 when Accept excludes every type the operation answers', async () => {
    const response = await myself({ accept: 'text/html' });
    await expectProblem(response, 406, {
      detail: 'This operation answers application/json, text/json, text/plain',
    });
    const json = await myself({ accept: 'application/json;q=0, text/html' });
    await expectProblem(json, 406);
    // login is not a textual read, so text/plain is not one of its types
    const loginResponse = await api.fetch('/api/auth/login', {
      method: 'POST',
      json: { email, password: 'x' },
      headers: { accept: 'text/plain' },
    });
    await expectProblem(loginResponse, 406, { detail: 'This operation answers application/json' });
  });

  it.each([
    ['text/plain', 'text/plain'],
    ['a form', 'application/x-www-form-urlencoded'],
    ['XML', 'application/xml'],
    ['multipart', 'multipart/form-data; boundary=x'],
  ])('415 for a body sent as %s', async (_label, contentType) => {
    const response = await postRaw(api, '/api/accounts/batch', '{"ids":[1]}', { token, contentType });
    await expectProblem(response, 415, { detail: 'The request body must be application/json' });
  });

  it('415 for a body without a content type', async () => {
    const response = await postRaw(api, '/api/accounts/batch', new TextEncoder().encode('{"ids":[1]}'), {
      token,
      contentType: null,
    });
    await expectProblem(response, 415);
  });

  it('413 for a body over BODY_LIMIT', async () => {
    const ids = Array.from({ length: 100 }, (_, i) => 1_000_000_000 + i); // 100 ten-digit ids fit in 2 kB
    const fits = await api.fetch('/api/accounts/batch', { method: 'POST', token, json: { ids } });
    expect(fits.status).toBe(200);
    expect(await fits.json()).toEqual([]);

    const response = await postRaw(
      api,
      '/api/accounts/batch',
      JSON.stringify({ ids: [1], pad: 'x'.repeat(3000) }),
      {
        token,
      },
    );
    await expectProblem(response, 413, { detail: 'The request body is too large' });
  });

  it('500 is a bare ProblemDetails that leaks nothing of the error', async () => {
    const secret = 'postgres://admin:hunter2@db.internal:5432/prod';
    const routes = [
      defineRoute({
        method: 'get',
        path: '/api/test/boom',
        summary: 'Throws',
        tags: ['Test'],
        auth: 'public',
        handler: () => {
          throw new Error(`connection to ${secret} failed`);
        },
      }),
      defineRoute({
        method: 'get',
        path: '/api/test/conflict',
        summary: 'Throws an AppError',
        tags: ['Test'],
        auth: 'public',
        handler: () => {
          throw new AppError('Conflict', 'Already there');
        },
      }),
    ];
    await withApp(routes, async (base) => {
      const response = await fetch(`${base}/api/test/boom`, { headers: { 'x-request-id': 'boom-1' } });
      const text = await response.clone().text();
      expect(text).not.toContain('hunter2');
      expect(text).not.toContain('connection');
      expect(text).not.toMatch(/at .*\.ts/); // no stack
      const problem = await expectProblem(response, 500, {
        instance: '/api/test/boom',
        detail: 'Internal server error',
      });
      expect(problem).toEqual({
        type: 'https://httpstatuses.io/500',
        title: 'Internal server error',
        status: 500,
        detail: 'Internal server error',
        instance: '/api/test/boom',
        traceId: 'boom-1',
      });
      // an AppError keeps its status and detail
      await expectProblem(await fetch(`${base}/api/test/conflict`), 409, { detail: 'Already there' });
    });
  });
});

describe('routing', () => {
  const answer = (path: string, name: string) =>
    defineRoute({
      method: 'get',
      path,
      summary: name,
      tags: ['Test'],
      auth: 'public',
      handler: () => ({ route: name }),
    });

  it('a literal path wins over a parameterised one whatever the declaration order', async () => {
    const routes = [answer('/api/test/:id', 'by id'), answer('/api/test/special', 'special')];
    await withApp(routes, async (base) => {
      const special = await fetch(`${base}/api/test/special`);
      expect(special.status).toBe(200);
      expect(await special.json()).toEqual({ route: 'special' });
      const byId = await fetch(`${base}/api/test/7`);
      expect(byId.status).toBe(200);
      expect(await byId.json()).toEqual({ route: 'by id' });
      const post = await fetch(`${base}/api/test/special`, { method: 'POST' });
      expect(post.headers.get('allow')).toBe('HEAD, GET');
      await expectProblem(post, 405);
    });
  });
});

describe('401: no body and a WWW-Authenticate challenge', () => {
  it.each([
    ['no Authorization header', undefined],
    ['another scheme', 'Basic dXNlcjpwYXNz'],
    ['a bare Bearer', 'Bearer'],
    ['a token that is not a JWT', 'Bearer garbage'],
    ['a JWT-shaped token that does not verify', 'Bearer aaa.bbb.ccc'],
    ['an empty JWT', 'Bearer ..'],
    ['a token with a NUL-free but odd alphabet', 'Bearer e30.e30.!!!'],
    ['two tokens', `Bearer a.b.c Bearer a.b.c`],
  ])('for %s', async (_label, authorization) => {
    const response = await api.fetch('/api/accounts/myself', {
      headers: authorization === undefined ? {} : { authorization },
    });
    await expectUnauthenticated(response);
  });

  it('comes before input validation: a stranger learns nothing about an operation’s rules', async () => {
    const response = await postRaw(api, '/api/accounts/batch', '{"nonsense": true}');
    await expectUnauthenticated(response);
    const list = await api.fetch('/api/accounts?PageSize=abc');
    await expectUnauthenticated(list);
  });
});

describe('text/plain and text/json: the same JSON text under that media type', () => {
  const reads: [string, string, RequestInit & { json?: unknown }][] = [
    ['GET /api/accounts/myself', '/api/accounts/myself', {}],
    ['GET /api/accounts/:id', '/api/accounts/ID', {}],
    ['GET /api/accounts', '/api/accounts?PageSize=5', {}],
    ['POST /api/accounts/batch', '/api/accounts/batch', { method: 'POST', json: { ids: [1, 2] } }],
    ['POST /api/accounts/search', '/api/accounts/search', { method: 'POST', json: { filters: [] } }],
  ];

  it.each(reads)('%s', async (_label, rawPath, init) => {
    const path = rawPath.replace('ID', String(accountId));
    const json = await api.fetch(path, { ...init, token, headers: { accept: 'application/json' } });
    expect(json.status).toBe(200);
    expect(json.headers.get('content-type')).toBe('application/json; charset=utf-8');
    const jsonText = await json.text();
    expect(JSON.parse(jsonText)).toBeTruthy();
    for (const type of ['text/plain', 'text/json']) {
      const response = await api.fetch(path, { ...init, token, headers: { accept: type } });
      expect(response.status).toBe(200);
      expect(response.headers.get('content-type')).toBe(`${type}; charset=utf-8`);
      expect(await response.text()).toBe(jsonText);
    }
  });

  it('follows the client’s preference among the three', async () => {
    const response = await myself({ accept: 'application/json;q=0.5, text/json' });
    expect(response.headers.get('content-type')).toBe('text/json; charset=utf-8');
    expect(JSON.parse(await response.text())).toMatchObject({ id: accountId });
    const anything = await myself({ accept: '*/*' });
    expect(anything.headers.get('content-type')).toBe('application/json; charset=utf-8');
    expect(await anything.json()).toMatchObject({ id: accountId });
  });
});

describe('request bodies are JSON; merge patches are JSON too', () => {
  it('accepts application/merge-patch+json on a body route', async () => {
    const response = await postRaw(api, '/api/accounts/batch', JSON.stringify({ ids: [accountId] }), {
      token,
      contentType: 'application/merge-patch+json',
    });
    expect(response.status).toBe(200);
    expect(await response.json()).toEqual([expect.objectContaining({ id: accountId, email })]);
  });

  it('accepts other +json types and a charset parameter', async () => {
    for (const contentType of ['application/vnd.platform+json', 'application/json; charset=utf-8']) {
      const response = await postRaw(api, '/api/accounts/batch', JSON.stringify({ ids: [accountId] }), {
        token,
        contentType,
      });
      expect(response.status).toBe(200);
      expect(await response.json()).toEqual([expect.objectContaining({ id: accountId })]);
    }
  });

  it('logs in with a merge-patch+json body', async () => {
    const response = await postRaw(
      api,
      '/api/auth/login',
      JSON.stringify({ email, password: 'Test-Password-1!' }),
      {
        contentType: 'application/merge-patch+json',
      },
    );
    expect(response.status).toBe(200);
    expect(await response.json()).toEqual({
      accessToken: expect.any(String),
      refreshToken: expect.any(String),
    });
  });

  it('matches request property names case-insensitively; responses are camelCase', async () => {
    const response = await api.fetch('/api/accounts/batch', {
      method: 'POST',
      token,
      json: { IDS: [accountId] },
    });
    expect(response.status).toBe(200);
    const [account] = (await response.json()) as Record<string, unknown>[];
    expect(Object.keys(account!)).toEqual([
      'id',
      'partyId',
      'groupId',
      'email',
      'firstName',
      'lastName',
      'mustChangePassword',
      'multiFactorEnabled',
      'created',
      'lastModified',
      'deleted',
    ]);
  });
});

describe('request id', () => {
  it('echoes x-request-id, and a ProblemDetails traceId is that id', async () => {
    const ok = await myself({ 'x-request-id': 'client-req.42_a' });
    expect(ok.status).toBe(200);
    expect(ok.headers.get('x-request-id')).toBe('client-req.42_a');
    expect(await ok.json()).toMatchObject({ id: accountId });

    const failed = await api.fetch('/api/accounts/999999', {
      token,
      headers: { 'x-request-id': 'trace-me-1' },
    });
    expect(failed.headers.get('x-request-id')).toBe('trace-me-1');
    const problem = await expectProblem(failed, 404);
    expect(problem.traceId).toBe('trace-me-1');
  });

  it('makes one when absent or unusable, and uses it as the traceId', async () => {
    const variants: Record<string, string>[] = [
      {},
      { 'x-request-id': 'has spaces' },
      { 'x-request-id': 'x'.repeat(101) },
    ];
    for (const headers of variants) {
      const response = await api.fetch('/api/nope', { headers });
      const id = response.headers.get('x-request-id');
      expect(id).toMatch(/^[0-9a-f-]{36}$/);
      const problem = await expectProblem(response, 404);
      expect(problem.traceId).toBe(id);
    }
  });

  it('is on a 401 as well', async () => {
    const response = await api.fetch('/api/accounts', { headers: { 'x-request-id': 'anon-1' } });
    expect(response.headers.get('x-request-id')).toBe('anon-1');
    await expectUnauthenticated(response);
  });
});
