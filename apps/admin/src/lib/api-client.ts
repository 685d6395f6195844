import type { ProblemDetails, TokenResponse } from '@platform/shared';
import { RefreshFailedError, SessionExpiredError, type SessionStore } from './session';

/** An API answer other than 2xx, carrying the ProblemDetails when there was one. */
export class ApiError extends Error {
  /** The request's id: the ProblemDetails `traceId`, else the `x-request-id` the API answered. */
  readonly traceId: string | undefined;

  constructor(
    readonly status: number,
    readonly problem?: ProblemDetails,
    requestId?: string | null,
  ) {
    super(problem?.detail ?? problem?.title ?? `The API answered ${status}`);
    this.name = 'ApiError';
    this.traceId = problem?.traceId ?? requestId ?? undefined;
  }
}

/** Whether asking again could answer otherwise: not for a 4xx (not found, refused, invalid), but 408 and 429. */
export function retryable(error: unknown): boolean {
  return !(error instanceof ApiError) || error.status >= 500 || error.status === 408 || error.status === 429;
}

/**
 * What to tell the operator about a failed request: the ProblemDetails detail when there is one;
 * for a server error also its trace id, which finds the request in the API's log.
 */
export function errorMessage(error: unknown): string {
  if (error instanceof ApiError) {
    const trace = error.status >= 500 && error.traceId ? ` (trace id ${error.traceId})` : '';
    if (error.problem?.detail) return `${error.problem.detail}${trace}`;
    if (error.problem?.title) return `${error.problem.title}${trace}`;
    if (error.status === 401) return 'You are not signed in.';
    return `The API answered ${error.status}${trace}.`;
  }
  if (error instanceof SessionExpiredError) return error.message;
  if (error instanceof TypeError) return 'The API cannot be reached. Check the connection and try again.';
  if (error instanceof Error) return error.message;
  return 'Something went wrong.';
}

/** Field → messages of a validation ProblemDetails (400), or an empty object. */
export function fieldErrors(error: unknown): Record<string, string[]> {
  return error instanceof ApiError ? (error.problem?.errors ?? {}) : {};
}

export interface RequestOptions {
  method?: 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE';
  json?: unknown;
  /** Query parameters; undefined and empty values are left out. */
  query?: Record<string, string | number | boolean | undefined | null>;
  signal?: AbortSignal;
}

type Fetch = (input: string, init?: RequestInit) => Promise<Response>;

/** `path?query` with the empty values of `query` left out. */
export function withQuery(path: string, query: RequestOptions['query']): string {
  if (!query) return path;
  const params = new URLSearchParams();
  for (const [key, value] of Object.entries(query)) {
    if (value === undefined || value === null || value === '') continue;
    params.set(key, String(value));
  }
  const text = params.toString();
  return text ? `${path}?${text}` : path;
}

async function send(
  fetcher: Fetch,
  path: string,
  options: RequestOptions,
  token?: string,
): Promise<Response> {
  const headers: Record<string, string> = { accept: 'application/json' };
  if (token) headers.authorization = `Bearer ${token}`;
  if (options.json !== undefined) headers['content-type'] = 'application/json';
  return fetcher(withQuery(path, options.query), {
    method: options.method ?? 'GET',
    headers,
    body: options.json === undefined ? undefined : JSON.stringify(options.json),
    signal: options.signal,
  });
}

async function parse<T>(response: Response): Promise<T> {
  if (!response.ok) {
    const type = response.headers.get('content-type') ?? '';
    const problem = type.includes('json')
      ? ((await response.json().catch(() => undefined)) as ProblemDetails)
      : undefined;
    throw new ApiError(response.status, problem, response.headers.get('x-request-id'));
  }
  if (response.status === 204) return undefined as T;
  const text = await response.text();
  return (text ? JSON.parse(text) : undefined) as T;
}

export interface ApiClient {
  /** A request without a token (login, MFA, refresh). */
  public<T>(path: string, options?: RequestOptions): Promise<T>;
  /**
   * A request as the signed-in operator. A 401 triggers one refresh (shared with every other
   * request that meets a 401 meanwhile) and one retry; a refused refresh ends the session.
   */
  request<T>(path: string, options?: RequestOptions): Promise<T>;
}

/** The API client of the console, bound to a session store. */
export function createApiClient(
  session: SessionStore,
  fetcher: Fetch = (input, init) => fetch(input, init),
): ApiClient {
  return {
    public: async <T>(path: string, options: RequestOptions = {}) =>
      parse<T>(await send(fetcher, path, options)),
    async request<T>(path: string, options: RequestOptions = {}): Promise<T> {
      let current = await session.fresh();
      let response = await send(fetcher, path, options, current.accessToken);
      if (response.status === 401) {
        await response.body?.cancel();
        current = await session.refresh(current.accessToken);
        response = await send(fetcher, path, options, current.accessToken);
        if (response.status === 401) {
          // a token fresh from the API refused at once: the account or its party is gone
          session.end('expired');
          await response.body?.cancel();
          throw new SessionExpiredError();
        }
      }
      return parse<T>(response);
    },
  };
}

/**
 * POST /api/auth/refresh as the session store needs it: a 400 or 401 means the refresh token is
 * refused (used, revoked, expired) and the session is over; anything else may pass.
 */
export function refreshTokens(fetcher: Fetch = (input, init) => fetch(input, init)) {
  return async (refreshToken: string): Promise<TokenResponse> => {
    let response: Response;
    try {
      response = await send(fetcher, '/api/auth/refresh', { method: 'POST', json: { refreshToken } });
    } catch (error) {
      throw new RefreshFailedError(false, errorMessage(error));
    }
    if (response.status === 400 || response.status === 401) {
      await response.body?.cancel();
      throw new RefreshFailedError(true, 'The session can no longer be refreshed.');
    }
    try {
      return await parse<TokenResponse>(response);
    } catch (error) {
      throw new RefreshFailedError(false, errorMessage(error));
    }
  };
}
