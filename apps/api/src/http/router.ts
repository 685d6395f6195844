import Router from '@koa/router';
import type { Context, Middleware } from 'koa';
import { HttpMethodEnum, koaBody } from 'koa-body';
import { PartyType, permissionByName, TokenScope } from '@platform/shared';
import type { AppDeps } from '../deps';
import { authorizePortal, portalPrincipal } from '../auth/portal-access';
import type { Principal } from '../auth/principal';
import { AppError, UnauthenticatedError } from './errors';
import { multipartBody, multipartInput } from './multipart';
import { BinaryBody, type RouteAuth, type RouteDefinition, type RouteMultipart } from './route';
import { parseInput } from './validate';

const JSON_TYPES = ['application/json', 'application/merge-patch+json', 'application/*+json'];
const TEXTUAL_TYPES = ['application/json', 'text/json', 'text/plain'];

const missingBody = () =>
  new AppError('ValidationFailed', 'The request needs a JSON body', { '(body)': ['Required'] });

/** Errors of reading and parsing a request body: all caused by the client, so never a 500. */
function bodyError(error: Error & { status?: unknown; type?: unknown }): AppError {
  if (error.status === 413 || error.type === 'entity.too.large') {
    return new AppError('PayloadTooLarge', 'The request body is too large');
  }
  if (error.status === 415) {
    return new AppError('UnsupportedMediaType', `The request body cannot be decoded: ${error.message}`);
  }
  if (error instanceof SyntaxError) {
    const reason = error.message.startsWith('invalid JSON, only supports')
      ? 'must be a JSON object'
      : `is not valid JSON (${error.message.slice(0, 200)})`;
    return new AppError('BadRequest', `The request body ${reason}`);
  }
  return new AppError('BadRequest', 'The request body could not be read');
}

/** Verifies the bearer token; anything but a valid access token is a bare 401. */
async function authenticate(ctx: Context, deps: AppDeps): Promise<Principal> {
  const header = ctx.get('authorization');
  const match = /^Bearer\s+([A-Za-z0-9_-]+\.[A-Za-z0-9_-]*\.[A-Za-z0-9_-]*)\s*$/i.exec(header);
  if (!match) throw new UnauthenticatedError(header ? 'malformed authorization header' : 'no token');
  const principal = await deps.tokens.verifyAccessToken(match[1]!);
  if (!principal) {
    // not an access token: an endpoint-portal session's, or nothing (docs/portal.md#security-model)
    const portal = await deps.tokens.verifyPortalToken(match[1]!);
    if (!portal) throw new UnauthenticatedError('invalid token');
    return portalPrincipal(deps, portal);
  }
  if (principal.webhookRegistrationId !== undefined) {
    // a webhook token lives 30 minutes outside the platform; deleting its registration (say,
    // after the target leaked it) must end it at once, so it costs one primary-key read
    const live = await deps
      .knex('webhook_registrations')
      .where({ id: principal.webhookRegistrationId, party_id: principal.partyId })
      .whereNull('deleted')
      .first('id');
    if (!live) throw new UnauthenticatedError('webhook registration deleted');
  }
  return principal;
}

const PARTY_TYPE_NAMES = Object.fromEntries(Object.entries(PartyType).map(([name, value]) => [value, name]));

/** Scope, party type and permission checks, in that order; each refusal is a 403 saying why. */
export function authorize(principal: Principal, auth: RouteAuth): void {
  const scopes = auth.scopes ?? [TokenScope.Platform];
  if (!scopes.includes(principal.scope)) {
    throw new AppError('Forbidden', `A token with scope "${principal.scope}" cannot call this operation`);
  }
  if (!auth.allow.includes(principal.partyType)) {
    throw new AppError(
      'Forbidden',
      `Party type ${PARTY_TYPE_NAMES[principal.partyType]} (${principal.partyType}) cannot call this operation`,
    );
  }
  // accounts of party type User are not subject to permission checks (docs/api.md#permissions)
  if (auth.permission && principal.partyType !== PartyType.User) {
    if (!principal.permissions.has(permissionByName(auth.permission).id)) {
      throw new AppError('Forbidden', `This operation needs the permission ${auth.permission}`);
    }
  }
}

interface MatchedLayer {
  paramNames: unknown[];
  methods: string[];
}

/**
 * A path with parameters never answers a request its literal segments name: `GET /api/accounts/batch`
 * is the batch path under the wrong method (405), not account "batch" (400). (When the literal path
 * serves the method, the router's `specificity` rule has already picked it over this route.)
 */
const literalPathsFirst: Middleware = async (ctx, next) => {
  const literal = ((ctx as unknown as { matched?: MatchedLayer[] }).matched ?? []).filter(
    (layer) => layer.paramNames.length === 0 && layer.methods.length > 0,
  );
  if (literal.length === 0) return next();
  throw methodNotAllowed(ctx.method, [...new Set(literal.flatMap((layer) => layer.methods))].join(', '));
};

function methodNotAllowed(method: string, allow: string): AppError {
  return new AppError(
    'MethodNotAllowed',
    `${method} is not supported on this path; use ${allow}`,
    undefined,
    {
      Allow: allow,
    },
  );
}

/**
 * Whether an `If-None-Match` header names `etag` (weak comparison, RFC 9110 13.1.2). Evaluated
 * here rather than by Koa's `ctx.fresh`, which ignores the header when the request also says
 * `Cache-Control: no-cache`, as fetch() does for every conditional request.
 */
function matchesEtag(header: string, etag: string): boolean {
  if (header.trim() === '*') return true;
  return header.split(',').some((tag) => tag.trim().replace(/^W\//, '') === `"${etag}"`);
}

/**
 * The one pipeline every route runs: authenticate → authorize → validate → handler → render.
 * A caller who may not use an operation learns nothing about its input rules.
 */
function pipeline(route: RouteDefinition, deps: AppDeps): Middleware[] {
  const middlewares: Middleware[] = [];
  if (/[:*(]/.test(route.path)) middlewares.push(literalPathsFirst);
  if (route.auth !== 'public') {
    const auth = route.auth;
    middlewares.push(async (ctx, next) => {
      const principal = await authenticate(ctx, deps);
      // a portal token's rights are its session's actions, for the routes PORTAL_ROUTE_RULES lists
      if (principal.portal) authorizePortal(principal, route);
      else authorize(principal, auth);
      ctx.state.principal = principal;
      await next();
    });
  }
  if (route.multipart) {
    middlewares.push(multipartBody(route as RouteDefinition & { multipart: RouteMultipart }, deps));
  } else if (route.body) {
    middlewares.push(async (ctx, next) => {
      if (!ctx.request.length && !ctx.get('transfer-encoding')) {
        if (!route.optionalBody) throw missingBody();
        // nothing to parse: the handler sees `{}` (koa-body below leaves an empty request alone)
        ctx.request.body = {};
        return next();
      }
      if (!ctx.is(JSON_TYPES)) {
        throw new AppError('UnsupportedMediaType', 'The request body must be application/json');
      }
      await next();
    });
    middlewares.push(
      koaBody({
        json: true,
        // the same types the check above lets through, or koa-body would leave them unparsed
        jsonTypes: JSON_TYPES,
        urlencoded: false,
        text: false,
        multipart: false,
        // the route's own method: koa-body leaves DELETE bodies unparsed unless told
        parsedMethods: [HttpMethodEnum[route.method.toUpperCase() as Uppercase<RouteDefinition['method']>]],
        jsonStrict: true,
        jsonLimit: deps.config.BODY_LIMIT,
        includeUnparsed: true,
        onError: (error, ctx) => {
          // the rest of a body that failed to read or decompress is left unread: close the
          // connection after the answer, or the client's next request on it meets a reset
          ctx.set('Connection', 'close');
          throw bodyError(error);
        },
      }),
    );
    middlewares.push(async (ctx, next) => {
      // a chunked body can still turn out empty; koa-body would make that `{}`
      if (ctx.request.rawBody?.trim() === '') {
        if (!route.optionalBody) throw missingBody();
        ctx.request.body = {};
      }
      await next();
    });
  }
  middlewares.push(async (ctx) => {
    const produces = route.textual ? TEXTUAL_TYPES : ['application/json'];
    // a download answers the media type it holds, whatever Accept says (RFC 9110 allows it)
    const responseType =
      route.status === 204 || route.response?.binary ? 'application/json' : ctx.accepts(produces);
    if (!responseType) {
      throw new AppError('NotAcceptable', `This operation answers ${produces.join(', ')}`);
    }
    const params = route.params ? parseInput(route.params, ctx.params, 'path parameters') : undefined;
    const query = route.query ? parseInput(route.query, { ...ctx.query }, 'query') : undefined;
    const upload = route.multipart ? multipartInput(route.multipart, route.body, ctx) : undefined;
    const body = upload
      ? upload.body
      : route.body
        ? parseInput(route.body, ctx.request.body, 'body')
        : undefined;
    const result = await route.handler({
      params,
      query,
      body,
      files: upload?.files ?? {},
      deps,
      ctx,
      get principal(): Principal {
        const principal = ctx.state.principal as Principal | undefined;
        if (!principal) throw new Error(`route ${route.path} is public and has no principal`);
        return principal;
      },
    });
    ctx.status = route.status ?? 200;
    if (ctx.status === 204) return;
    if (result instanceof BinaryBody) {
      // the type first: setting a Buffer body without one would make it application/octet-stream
      ctx.set('Content-Type', result.contentType);
      ctx.set(result.headers);
      if (result.etag !== undefined) {
        ctx.etag = result.etag;
        if (matchesEtag(ctx.get('if-none-match'), result.etag)) {
          ctx.status = 304;
          return;
        }
      }
      ctx.body = result.bytes;
      return;
    }
    ctx.type = responseType as string;
    // text/plain and text/json carry the same JSON text (docs/decisions.md#api-conventions)
    ctx.body = responseType === 'application/json' ? result : JSON.stringify(result);
  });
  return middlewares;
}

/** A Koa router serving `routes`, with 405 for a known path and an unknown method. */
export function buildRouter(routes: readonly RouteDefinition[], deps: AppDeps): Router {
  // one route answers a request; of several matching ones, the one with the fewest parameters
  // (`/api/accounts/myself` over `/api/accounts/:id`), whatever the order they are declared in
  const router = new Router({ exclusive: 'specificity' });
  for (const route of routes) router[route.method](route.path, ...pipeline(route, deps));
  return router;
}

/**
 * Answers a path served only under other methods: 405 ProblemDetails with `Allow` (also for a
 * method no route implements), or `Allow` alone for OPTIONS. Where a literal path and a
 * parameterised one both match (`/api/accounts/batch`, `/api/accounts/:id`), the literal one
 * decides, as in `literalPathsFirst`.
 */
export function allowedMethods(_router: Router): Middleware {
  return async (ctx, next) => {
    await next();
    if (ctx.status !== 404 || ctx.body !== undefined) return;
    const layers = ((ctx as unknown as { matched?: MatchedLayer[] }).matched ?? []).filter(
      (layer) => layer.methods.length > 0,
    );
    const literal = layers.filter((layer) => layer.paramNames.length === 0);
    const allow = [
      ...new Set((literal.length > 0 ? literal : layers).flatMap((layer) => layer.methods)),
    ].join(', ');
    if (!allow) return;
    if (ctx.method === 'OPTIONS') {
      ctx.status = 204;
      ctx.set('Allow', allow);
      return;
    }
    throw methodNotAllowed(ctx.method, allow);
  };
}
