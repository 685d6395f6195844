import { describe, expect, it, vi } from 'vitest';
import { WebhookState } from '@platform/shared';
import { ApiError, createApiClient, errorMessage, retryable, refreshTokens, withQuery } from './api-client';
import { createSessionStore, RefreshFailedError, SessionExpiredError } from './session';
import { fakeAccessToken } from '../../tests/support/tokens';

const json = (status: number, body: unknown, type = 'application/json') =>
  new Response(JSON.stringify(body), { status, headers: { 'content-type': type } });
const unauthorized = () => new Response(null, { status: 401 });

/** A fake API: hands out numbered token pairs on refresh and accepts only the newest access token. */
function fakeApi(options: { refreshStatus?: number } = {}) {
  let generation = 1;
  // one expiry for every token: fakeAccessToken's default (now + 900 s) differs across a second's
  // edge, and the token a refresh handed out would then not match the one checked against
  const exp = Math.floor(Date.now() / 1000) + 900;
  const token = (n: number) => fakeAccessToken({ jti: n, exp });
  const seen: { path: string; authorization: string | null }[] = [];
  let refreshes = 0;
  const fetcher = vi.fn(async (path: string, init?: RequestInit) => {
    const headers = new Headers(init?.headers);
    seen.push({ path, authorization: headers.get('authorization') });
    if (path === '/api/auth/refresh') {
      refreshes++;
      if (options.refreshStatus) return new Response(null, { status: options.refreshStatus });
      await new Promise((resolve) => setTimeout(resolve, 5));
      generation++;
      return json(200, { accessToken: token(generation), refreshToken: `r${generation}` });
    }
    if (headers.get('authorization') !== `Bearer ${token(generation)}`) return unauthorized();
    return json(200, { path });
  });
  return { fetcher, seen, token, refreshes: () => refreshes, expire: () => generation++ };
}

describe('api client', () => {
  it('sends the access token and parses JSON', async () => {
    const api = fakeApi();
    const store = createSessionStore({ refresh: refreshTokens(api.fetcher) });
    store.start({ accessToken: api.token(1), refreshToken: 'r1' });
    const client = createApiClient(store, api.fetcher);
    await expect(
      client.request('/api/webhooks', { query: { state: WebhookState.Failed, entityName: undefined } }),
    ).resolves.toEqual({
      path: `/api/webhooks?state=${WebhookState.Failed}`,
    });
  });

  it('answers a 401 with one refresh shared by concurrent requests, then retries each once', async () => {
    const api = fakeApi();
    const store = createSessionStore({ refresh: refreshTokens(api.fetcher) });
    // the server rotated keys, say: the held token is refused although it has not expired
    store.start({ accessToken: api.token(0), refreshToken: 'r1' });
    const client = createApiClient(store, api.fetcher);
    const results = await Promise.all(['/a', '/b', '/c'].map((path) => client.request(path)));
    expect(results).toEqual([{ path: '/a' }, { path: '/b' }, { path: '/c' }]);
    expect(api.refreshes()).toBe(1);
    expect(store.get()?.refreshToken).toBe('r2');
  });

  it('ends the session when the refresh is refused, and says so', async () => {
    const api = fakeApi({ refreshStatus: 401 });
    const store = createSessionStore({ refresh: refreshTokens(api.fetcher) });
    store.start({ accessToken: api.token(0), refreshToken: 'r1' });
    const client = createApiClient(store, api.fetcher);
    await expect(client.request('/a')).rejects.toBeInstanceOf(SessionExpiredError);
    expect(store.get()).toBeNull();
    expect(store.endReason()).toBe('expired');
  });

  it('turns ProblemDetails into an ApiError whose message is the detail', async () => {
    const store = createSessionStore({ refresh: vi.fn() });
    store.start({ accessToken: fakeAccessToken(), refreshToken: 'r' });
    const problem = {
      type: 'x',
      title: 'Conflict',
      status: 409,
      detail: 'Webhook 5 is Successful, which is final',
    };
    const client = createApiClient(store, async () => json(409, problem, 'application/problem+json'));
    const error = await client.request('/api/webhooks/5/abort', { method: 'POST' }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(ApiError);
    expect((error as ApiError).status).toBe(409);
    expect(errorMessage(error)).toBe('Webhook 5 is Successful, which is final');
  });

  it('answers undefined for a 204', async () => {
    const store = createSessionStore({ refresh: vi.fn() });
    store.start({ accessToken: fakeAccessToken(), refreshToken: 'r' });
    const client = createApiClient(store, async () => new Response(null, { status: 204 }));
    await expect(
      client.request('/api/webhook-registrations/1', { method: 'DELETE' }),
    ).resolves.toBeUndefined();
  });
});

describe('refreshTokens', () => {
  it('marks a refused refresh token as rejected and a network failure as not', async () => {
    const refused = await refreshTokens(async () => new Response(null, { status: 401 }))('r').catch(
      (e: unknown) => e,
    );
    expect(refused).toBeInstanceOf(RefreshFailedError);
    expect((refused as RefreshFailedError).rejected).toBe(true);
    const offline = await refreshTokens(async () => {
      throw new TypeError('fetch failed');
    })('r').catch((e: unknown) => e);
    expect((offline as RefreshFailedError).rejected).toBe(false);
    const broken = await refreshTokens(async () => json(502, {}))('r').catch((e: unknown) => e);
    expect((broken as RefreshFailedError).rejected).toBe(false);
  });
});

describe('withQuery and errorMessage', () => {
  it('leaves out empty values', () => {
    expect(withQuery('/x', { a: 1, b: '', c: undefined, d: null, e: false })).toBe('/x?a=1&e=false');
    expect(withQuery('/x', {})).toBe('/x');
  });

  it('explains failures without ProblemDetails', () => {
    expect(errorMessage(new ApiError(500))).toBe('The API answered 500.');
    expect(errorMessage(new TypeError('Failed to fetch'))).toMatch(/cannot be reached/);
    expect(errorMessage(new SessionExpiredError())).toMatch(/Sign in again/);
  });

  it("says a server error's trace id, from its ProblemDetails or the x-request-id answered", () => {
    const problem = { type: 't', title: 'Internal server error', status: 500, traceId: 'req-1' };
    expect(errorMessage(new ApiError(500, problem))).toBe('Internal server error (trace id req-1)');
    expect(errorMessage(new ApiError(502, undefined, 'req-2'))).toBe(
      'The API answered 502 (trace id req-2).',
    );
    // a refusal is the operator's to fix: its detail alone
    expect(errorMessage(new ApiError(404, { ...problem, status: 404, detail: 'No webhook 9' }))).toBe(
      'No webhook 9',
    );
  });

  it('offers to ask again only where that could help', () => {
    expect(retryable(new ApiError(404))).toBe(false);
    expect(retryable(new ApiError(403))).toBe(false);
    expect(retryable(new ApiError(429))).toBe(true);
    expect(retryable(new ApiError(500))).toBe(true);
    expect(retryable(new TypeError('Failed to fetch'))).toBe(true);
  });
});
