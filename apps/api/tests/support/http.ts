import { request as httpRequest, type IncomingHttpHeaders, type IncomingMessage } from 'node:http';
import { expect } from 'vitest';
import type { TestApi } from './api';

/** The body of a ProblemDetails answer. */
export interface Problem {
  type: string;
  title: string;
  status: number;
  detail: string;
  instance: string;
  errors?: Record<string, string[]>;
  traceId: string;
}

/**
 * Asserts `response` is an RFC 9457 ProblemDetails of `status`: the media type, every field, the
 * trace id equal to the echoed `x-request-id`, and what `match` adds (`errors` compared exactly).
 */
export async function expectProblem(
  response: Response,
  status: number,
  match: { detail?: string | RegExp; instance?: string; errors?: Record<string, unknown> } = {},
): Promise<Problem> {
  const text = await response.text();
  expect(response.status, text).toBe(status);
  expect(response.headers.get('content-type')).toBe('application/problem+json');
  const body = JSON.parse(text) as Problem;
  expect(body).toEqual({
    type: `https://httpstatuses.io/${status}`,
    title: expect.any(String),
    status,
    detail: expect.any(String),
    instance: expect.stringMatching(/^\//),
    traceId: response.headers.get('x-request-id'),
    ...(body.errors !== undefined || match.errors ? { errors: match.errors ?? expect.any(Object) } : {}),
  });
  if (match.detail instanceof RegExp) expect(body.detail).toMatch(match.detail);
  else if (match.detail !== undefined) expect(body.detail).toBe(match.detail);
  if (match.instance !== undefined) expect(body.instance).toBe(match.instance);
  return body;
}

/** The parsed JSON body of `response` after asserting its status (the body is shown on failure). */
export async function readJson<T = unknown>(response: Response, status = 200): Promise<T> {
  const text = await response.text();
  expect(response.status, text).toBe(status);
  return JSON.parse(text) as T;
}

/**
 * Asserts each `[body, field]` of `cases`, sent as `method` to `path`, is refused with a 400
 * ProblemDetails whose `errors` name `field`.
 */
export async function expectFieldErrors(
  api: TestApi,
  method: string,
  path: string,
  token: string,
  cases: readonly (readonly [unknown, string])[],
): Promise<void> {
  for (const [body, field] of cases) {
    const problem = await expectProblem(await api.fetch(path, { method, token, json: body }), 400);
    expect(problem.errors, JSON.stringify(body)).toHaveProperty(field);
  }
}

/** Asserts a bare 401: no body, no content type, a `WWW-Authenticate` challenge. */
export async function expectUnauthenticated(response: Response): Promise<void> {
  expect(response.status).toBe(401);
  expect(await response.text()).toBe('');
  expect(response.headers.get('content-type')).toBeNull();
  expect(response.headers.get('www-authenticate')).toMatch(/^Bearer /);
}

/** A POST of `body` as raw text (fetch would serialise a value; these bodies are deliberately odd). */
export function postRaw(
  api: TestApi,
  path: string,
  body: string | Uint8Array,
  init: { token?: string; contentType?: string | null; headers?: Record<string, string> } = {},
): Promise<Response> {
  const headers: Record<string, string> = { ...init.headers };
  if (init.contentType !== null) headers['content-type'] = init.contentType ?? 'application/json';
  return api.fetch(path, { method: 'POST', token: init.token, headers, body });
}

/** The status, headers and body text of a node:http response, once it has ended. */
export function readIncoming(
  res: IncomingMessage,
): Promise<{ status: number; headers: IncomingHttpHeaders; text: string }> {
  return new Promise((resolve, reject) => {
    const parts: Buffer[] = [];
    res.on('data', (chunk: Buffer) => parts.push(chunk));
    res.on('end', () =>
      resolve({
        status: res.statusCode ?? 0,
        headers: res.headers,
        text: Buffer.concat(parts).toString('utf8'),
      }),
    );
    res.on('error', reject);
  });
}

/**
 * A request over node:http, for what fetch cannot send: a chunked body that turns out empty,
 * an exact `Content-Encoding`. Answers the status, headers and body text.
 */
export function rawRequest(
  api: TestApi,
  options: { method: string; path: string; headers: Record<string, string>; chunks?: (string | Buffer)[] },
): Promise<{ status: number; headers: Record<string, string | string[] | undefined>; text: string }> {
  return new Promise((resolve, reject) => {
    const url = new URL(options.path, api.url);
    const req = httpRequest(
      {
        host: url.hostname,
        port: url.port,
        path: url.pathname + url.search,
        method: options.method,
        headers: options.headers,
      },
      (res) => void readIncoming(res).then(resolve, reject),
    );
    req.on('error', reject);
    for (const chunk of options.chunks ?? []) req.write(chunk);
    req.end();
  });
}

/** Row counts of the tables a request could write to, to prove a refused one wrote nothing. */
export async function writableCounts(api: TestApi): Promise<Record<string, number>> {
  const counts: Record<string, number> = {};
  for (const table of ['accounts', 'refresh_tokens', 'rate_limit_hits', 'parties', 'mail_outbox']) {
    const [row] = await api.deps.knex(table).count<{ count: string }[]>({ count: '*' });
    counts[table] = Number(row?.count);
  }
  // the sum of hits, since a refused login must not even count against its rate limit
  const [hits] = await api.deps.knex('rate_limit_hits').sum<{ sum: string | null }[]>({ sum: 'hits' });
  counts.rate_limit_hit_total = Number(hits?.sum ?? 0);
  return counts;
}

/**
 * Row counts of every table of the database (`writableCounts` covers those the auth and account
 * tests look at), in one query: a refused request must leave every one as it was.
 */
export async function allTableCounts(api: TestApi): Promise<Record<string, number>> {
  const { rows: tables } = await api.deps.knex.raw<{ rows: { name: string }[] }>(
    `select table_name as name from information_schema.tables
     where table_schema = 'public' and table_type = 'BASE TABLE' order by table_name`,
  );
  const { rows } = await api.deps.knex.raw<{ rows: Record<string, string>[] }>(
    `select ${tables.map(() => `(select count(*) from ??) as ??`).join(', ')}`,
    tables.flatMap(({ name }) => [name, name]),
  );
  return Object.fromEntries(Object.entries(rows[0] ?? {}).map(([name, count]) => [name, Number(count)]));
}
