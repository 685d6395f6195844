import type { ProblemDetails } from '@platform/shared';

/** An API answer other than 2xx, carrying the ProblemDetails when there was one. */
export class ApiError extends Error {
  constructor(
    readonly status: number,
    readonly problem?: ProblemDetails,
  ) {
    super(problem?.detail ?? problem?.title ?? `HTTP ${status}`);
  }
}

/** fetch against the API with JSON in and out; non-2xx becomes an ApiError. */
export async function apiFetch<T>(
  path: string,
  init: { method?: string; token?: string; json?: unknown } = {},
): Promise<T> {
  const headers: Record<string, string> = { accept: 'application/json' };
  if (init.token) headers.authorization = `Bearer ${init.token}`;
  if (init.json !== undefined) headers['content-type'] = 'application/json';
  const response = await fetch(path, {
    method: init.method ?? 'GET',
    headers,
    body: init.json === undefined ? undefined : JSON.stringify(init.json),
  });
  if (!response.ok) {
    const isProblem = response.headers.get('content-type')?.includes('problem+json');
    throw new ApiError(response.status, isProblem ? ((await response.json()) as ProblemDetails) : undefined);
  }
  return (await response.json()) as T;
}
