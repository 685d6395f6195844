import type { Context } from 'koa';
import type { PartyType, PermissionName, TokenScope } from '@platform/shared';
import type { z } from 'zod';
import type { AppDeps } from '../deps';
import type { Principal } from '../auth/principal';

/** Who may call a route: party types, an optional permission, and token scopes (default platform). */
export interface RouteAuth {
  allow: readonly PartyType[];
  permission?: PermissionName;
  scopes?: readonly TokenScope[];
}

export interface RouteResponse {
  description: string;
  schema?: z.ZodType;
  /**
   * The body is bytes of a media type known only at run time (a download): the handler answers
   * a `BinaryBody`, whatever `Accept` asks for, and `headers` (name → description) document it.
   */
  binary?: { headers?: Record<string, string> };
}

/** What a `binary` route's handler answers: the bytes, their media type and extra headers. */
export class BinaryBody {
  constructor(
    readonly bytes: Buffer,
    readonly contentType: string,
    readonly headers: Record<string, string> = {},
    /** The entity tag (unquoted); a request whose `If-None-Match` matches it gets a 304. */
    readonly etag?: string,
  ) {}
}

/** A file part of a multipart request, on disk until the request has been answered. */
export interface UploadedFile {
  /** Where its bytes are; removed when the request ends. */
  path: string;
  /** The part's `filename`, as sent (unsanitised); null when it had none. */
  fileName: string | null;
  /** The part's Content-Type header, as sent. */
  contentType: string;
  size: number;
}

/**
 * A multipart/form-data body: the file parts `files` beside the text fields, which the route's
 * `body` schema validates as it would a JSON body (text values: numbers arrive as digits).
 */
export interface RouteMultipart {
  /** Names of the file parts; each must come exactly once. */
  files: readonly string[];
  /** The largest file part, in bytes: a function of the configuration, as limits are policy. */
  maxFileBytes(config: AppDeps['config']): number;
}

export interface RouteInput<P, Q, B> {
  params: P;
  query: Q;
  body: B;
  /** The file parts of a `multipart` route by name; empty on other routes. */
  files: Record<string, UploadedFile>;
  /** The caller; only on routes with `auth` (reading it on a public route throws). */
  principal: Principal;
  deps: AppDeps;
  ctx: Context;
}

type Output<S> = S extends z.ZodType ? z.output<S> : undefined;

export interface RouteDefinition<
  PS extends z.ZodType | undefined = z.ZodType | undefined,
  QS extends z.ZodType | undefined = z.ZodType | undefined,
  BS extends z.ZodType | undefined = z.ZodType | undefined,
> {
  method: 'get' | 'post' | 'put' | 'patch' | 'delete';
  /** Koa-style path, `/api/accounts/:id`. */
  path: string;
  summary: string;
  tags: string[];
  description?: string;
  deprecated?: boolean;
  /** `'public'` for login and friends; otherwise who may call it. */
  auth: RouteAuth | 'public';
  params?: PS;
  query?: QS;
  body?: BS;
  /** The body may be left out (no content at all): the handler then sees `body` as `{}`. */
  optionalBody?: boolean;
  /** Takes multipart/form-data (file parts plus the text fields `body` validates) instead of JSON. */
  multipart?: RouteMultipart;
  /** Success status; 200 unless said otherwise (204 sends no body). */
  status?: 200 | 201 | 202 | 204;
  response?: RouteResponse;
  /** Reads the spec marks so also answer `text/plain` and `text/json` with the same body. */
  textual?: boolean;
  /**
   * Error statuses this route can answer besides 400 and 500 (and 401, 403 on routes with `auth`),
   * for the OpenAPI document: a public route that refuses a token or a blocked caller declares 401 or 403.
   */
  errors?: readonly (401 | 403 | 404 | 409 | 413 | 415 | 429)[];
  /** The OpenAPI operationId; derived from the method and path when absent (see `operationIdOf`). */
  operationId?: string;
  handler(input: RouteInput<Output<PS>, Output<QS>, Output<BS>>): unknown;
}

/** Declares a route; the identity function that lets TypeScript infer the handler's input types. */
export function defineRoute<
  PS extends z.ZodType | undefined = undefined,
  QS extends z.ZodType | undefined = undefined,
  BS extends z.ZodType | undefined = undefined,
>(route: RouteDefinition<PS, QS, BS>): RouteDefinition {
  return route as unknown as RouteDefinition;
}
