import Router from '@koa/router';
import type { Context, Middleware } from 'koa';
import { koaBody } from 'koa-body';
import { PartyType, permissionByName, TokenScope } from '@platform/shared';
import type { AppDeps } from '../deps';
import type { Principal } from '../auth/principal';
import { AppError, UnauthenticatedError } from './errors';
import type { RouteAuth, RouteDefinition } from './route';
import { parseInput } from './validate';

const JSON_TYPES = ['application/json', 'application/merge-patch+json', 'application/*+json'];
const TEXTUAL_TYPES = ['application/json', 'text/json', 'text/plain'];

/** Verifies the bearer token; anything but a valid access token is a bare 401. */
async function authenticate(ctx: Context, deps: AppDeps): Promise<Principal> {
  const header = ctx.get('authorization');
  const match = /^Bearer\s+([A-Za-z0-9_-]+\.[A-Za-z0-9_-]*\.[A-Za-z0-9_-]*)\s*$/i.exec(header);
  if (!match) throw new UnauthenticatedError(header ? 'malformed authorization header' : 'no token');
  const principal = await deps.tokens.verifyAccessToken(match[1]!);
  if (!principal) throw new UnauthenticatedError('invalid token');
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
  // accounts of party type User are not subject to permission checks (spec 5.5)
  if (auth.permission && principal.partyType !== PartyType.User) {
    if (!principal.permissions.has(permissionByName(auth.permission).id)) {
      throw new AppError('Forbidden', `This operation needs the permission ${auth.permission}`);
    }
  }
}

/**
 * The one pipeline every route runs: authenticate → authorize → validate → handler → render.
 * A caller who may not use an operation learns nothing about its input rules.
 */
function pipeline(route: RouteDefinition, deps: AppDeps): Middleware[] {
  const middlewares: Middleware[] = [];
  if (route.auth !== 'public') {
    const auth = route.auth;
    middlewares.push(async (ctx, next) => {
      const principal = await authenticate(ctx, deps);
      authorize(principal, auth);
      ctx.state.principal = principal;
      await next();
    });
  }
  if (route.body) {
    middlewares.push(async (ctx, next) => {
      if (!ctx.request.length && !ctx.get('transfer-encoding')) {
        throw new AppError('ValidationFailed', 'The request needs a JSON body', { '(body)': ['Required'] });
      }
      if (!ctx.is(JSON_TYPES)) {
        throw new AppError('UnsupportedMediaType', 'The request body must be application/json');
      }
      await next();
    });
    middlewares.push(
      koaBody({
        json: true,
        urlencoded: false,
        text: false,
        multipart: false,
        jsonStrict: true,
        jsonLimit: deps.config.BODY_LIMIT,
        onError: (error) => {
          throw error;
        },
      }),
    );
  }
  middlewares.push(async (ctx) => {
    const produces = route.textual ? TEXTUAL_TYPES : ['application/json'];
    const responseType = route.status === 204 ? 'application/json' : ctx.accepts(produces);
    if (!responseType) {
      throw new AppError('NotAcceptable', `This operation answers ${produces.join(', ')}`);
    }
    const params = route.params ? parseInput(route.params, ctx.params, 'path parameters') : undefined;
    const query = route.query ? parseInput(route.query, { ...ctx.query }, 'query') : undefined;
    const body = route.body ? parseInput(route.body, ctx.request.body, 'body') : undefined;
    const result = await route.handler({
      params,
      query,
      body,
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
    ctx.type = responseType as string;
    // text/plain and text/json carry the same JSON text (spec 4)
    ctx.body = responseType === 'application/json' ? result : JSON.stringify(result);
  });
  return middlewares;
}

/** A Koa router serving `routes`, with 405 for a known path and an unknown method. */
export function buildRouter(routes: readonly RouteDefinition[], deps: AppDeps): Router {
  const router = new Router();
  for (const route of routes) router[route.method](route.path, ...pipeline(route, deps));
  return router;
}

/** Answers 405 (with `Allow`) for a path served under other methods. */
export function allowedMethods(router: Router): Middleware {
  return router.allowedMethods({
    throw: true,
    methodNotAllowed: () => new AppError('MethodNotAllowed', 'This path does not support that method'),
    notImplemented: () => new AppError('MethodNotAllowed', 'This method is not supported'),
  }) as unknown as Middleware;
}
