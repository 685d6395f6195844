import { expect } from 'vitest';
import { TEST_PASSWORD, type TestApi } from './api';
import { readJson } from './http';

/** Shared helpers of the Gen1 tests. */

export interface Gen1Tokens {
  access_token: string;
  refresh_token: string;
  token_type: 'Bearer';
  expires_in: number;
}

/** POST /auth/login (Gen1), unchecked. */
export const postGen1Login = (api: TestApi, body: unknown) =>
  api.fetch('/auth/login', { method: 'POST', json: body });

/** POST /auth/refresh (Gen1), unchecked. */
export const postGen1Refresh = (api: TestApi, refreshToken: string) =>
  api.fetch('/auth/refresh', { method: 'POST', json: { refresh_token: refreshToken } });

/** Logs in through the Gen1 API and answers its tokens. */
export async function gen1Login(api: TestApi, email: string, password = TEST_PASSWORD): Promise<Gen1Tokens> {
  const response = await postGen1Login(api, { email, password });
  return readJson<Gen1Tokens>(response);
}

/** GET `path` with `token`, asserting a 200, and answer the body. */
export async function getJson<T = Record<string, unknown>>(
  api: TestApi,
  path: string,
  token: string,
): Promise<T> {
  const response = await api.fetch(path, { token });
  expect(response.status, `${path}: ${await response.clone().text()}`).toBe(200);
  return (await response.json()) as T;
}

/** A Koa path with every parameter filled in (`/api/accounts/:id/party` → `/api/accounts/1/party`). */
export const concretePath = (path: string) => path.replace(/:\w+/g, '1');
