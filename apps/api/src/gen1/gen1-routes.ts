import { ALL_PARTY_TYPES, MAX_PAGE_SIZE } from '@platform/shared';
import { z } from 'zod';
import type { Principal } from '../auth/principal';
import { authorize } from '../http/router';
import { defineRoute, type RouteDefinition } from '../http/route';
import { parseInput, pathId, wholeNumberText } from '../http/validate';
import { gen1AuthRoutes } from './gen1-auth-routes';
import { listView, readView, writeView, type Gen1WholeList } from './gen1-view-service';
import { GEN1_VIEWS, writers, type Gen1View } from './gen1-views';

const tags = ['Gen1'];
const idParams = z.strictObject({ id: pathId });
const paging = {
  page: wholeNumberText('page', 1, 1_000_000).optional(),
  page_size: wholeNumberText('page_size', 1, MAX_PAGE_SIZE).optional(),
};

/** `page`, `page_size` and the view's id filters; anything else is refused. */
function listQuerySchema(view: Gen1View) {
  const filters = Object.fromEntries(
    (view.filters ?? []).map((name) => [name, wholeNumberText(name, 1, 2147483647).optional()]),
  );
  return z.strictObject({ ...paging, ...filters });
}

/**
 * The merge-patch body of a writable view: the Gen2 patch fields (no owning party, nothing
 * create-only) under their Gen1 names, each with its Gen2 rules.
 */
function patchShape(view: Gen1View): Record<string, z.ZodType> {
  const def = view.source.definition!;
  const patchable = new Set(Object.keys(def.write.shape).filter((field) => field !== 'partyId'));
  for (const field of def.createOnly ?? []) patchable.delete(field);
  const shape: Record<string, z.ZodType> = {};
  for (const [gen1, gen2] of Object.entries(view.fields)) {
    if (patchable.has(gen2)) shape[gen1] = def.write.shape[gen2] as z.ZodType;
  }
  return shape;
}

/** PUT replaces: every writable field must be given (null clears a nullable one). */
function putShape(view: Gen1View): Record<string, z.ZodType> {
  return Object.fromEntries(
    Object.entries(patchShape(view)).map(([name, field]) => [
      name,
      field instanceof z.ZodOptional ? (field.unwrap() as z.ZodType) : field,
    ]),
  );
}

/**
 * The Gen2 read permissions of what a view embeds, checked before its input is validated (as
 * the router checks a route's own): embedding must not show what the Gen2 reads would refuse.
 */
function authorizeEmbeds(principal: Principal, view: Gen1View): void {
  for (const permission of view.embeds?.permissions ?? []) {
    authorize(principal, { allow: view.source.readers.allow, permission });
  }
}

/** The routes of one view: list, single read, and PUT/PATCH when writable. */
function viewRoutes(view: Gen1View): RouteDefinition[] {
  const path = `/${view.name}`;
  const gen2 = view.source.entity;
  // query and path are parsed in the handlers, after the embeds' permissions (see authorizeEmbeds)
  const routes: RouteDefinition[] = [
    defineRoute({
      method: 'get',
      path,
      summary: `Gen1: list ${view.name} (Gen2 ${gen2})`,
      tags,
      auth: view.source.readers,
      handler: ({ deps, principal, ctx }) => {
        if (view.embeds?.list) authorizeEmbeds(principal, view);
        const query = parseInput(listQuerySchema(view), { ...ctx.query }, 'query');
        return listView(deps, principal, view, query);
      },
    }),
    defineRoute({
      method: 'get',
      path: `${path}/:id`,
      summary: `Gen1: read one of ${view.name} (Gen2 ${gen2})`,
      tags,
      auth: view.source.readers,
      errors: [404],
      handler: ({ deps, principal, ctx }) => {
        authorizeEmbeds(principal, view);
        const { id } = parseInput(idParams, ctx.params, 'path parameters');
        return readView(deps, principal, view, id);
      },
    }),
  ];
  if (view.writable) {
    const auth = writers(view.source.definition!);
    const bodies = {
      put: z.strictObject(putShape(view)),
      patch: z.strictObject(patchShape(view)).partial(),
    };
    for (const method of ['put', 'patch'] as const) {
      routes.push(
        defineRoute({
          method,
          path: `${path}/:id`,
          summary: `Gen1: ${method === 'put' ? 'replace' : 'update'} one of ${view.name} (Gen2 ${gen2} update)`,
          tags,
          auth,
          params: idParams,
          body: bodies[method],
          errors: [404, 409],
          handler: ({ deps, principal, params, body }) =>
            writeView(deps, principal, view, params.id, body as Record<string, unknown>),
        }),
      );
    }
  }
  return routes;
}

/**
 * Gen1 UserTask ("todo") has no Gen2 table (spec 9.8: not every Gen1 entity is covered), so the
 * view answers the empty list it truthfully is, rather than a 404 that would break Gen1 clients
 * polling it. `page` and `page_size` are accepted (and checked) for those clients' sake.
 */
const todoRoute = defineRoute({
  method: 'get',
  path: '/todo',
  summary: 'Gen1: list to-dos (no Gen2 table: always empty)',
  tags,
  auth: { allow: ALL_PARTY_TYPES },
  query: z.strictObject(paging),
  handler: (): Gen1WholeList => ({ data: [], total: 0, paginated: false }),
});

/** Every Gen1 route, at root paths (spec 9.3); served with Gen1 tokens only. */
export const GEN1_ROUTES: readonly RouteDefinition[] = [
  ...gen1AuthRoutes,
  ...GEN1_VIEWS.flatMap(viewRoutes),
  todoRoute,
];
