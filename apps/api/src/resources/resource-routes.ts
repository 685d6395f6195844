import { IdList, Page, TokenScope } from '@platform/shared';
import { z } from 'zod';
import { listQuery, searchBody } from '../http/collection';
import { PageQuery } from '../http/pagination';
import { defineRoute, type RouteDefinition } from '../http/route';
import { pathId } from '../http/validate';
import { DEFAULT_READERS, DEFAULT_WRITERS, type ResourceDefinition } from './resource';
import {
  batchReadResources,
  createResource,
  deleteResource,
  listResources,
  readResource,
  searchResources,
  updateResource,
} from './resource-service';

/** The merge-patch body of a resource: every write field optional; the owning party never moves. */
function patchSchema(def: ResourceDefinition) {
  const shape = { ...def.write.shape };
  delete shape.partyId;
  for (const field of def.createOnly ?? []) delete shape[field];
  return z
    .strictObject(shape)
    .partial()
    .meta({ id: `${def.name}Patch` });
}

/** The seven routes of a resource (six without delete), derived from its declaration, plus its own. */
export function resourceRoutes(def: ResourceDefinition): RouteDefinition[] {
  // reads also take the webhook bearer token (docs/dispatcher.md#what-the-api-lets-the-token-do); writes keep the default platform scope, so it gets a 403
  const readers = {
    allow: def.readers ?? DEFAULT_READERS,
    permission: `${def.permission}.Read` as const,
    scopes: [TokenScope.Platform, TokenScope.Webhook],
  };
  const writers = def.writers ?? DEFAULT_WRITERS;
  const tags = [def.name];
  const page = Page(def.read).meta({ id: `PaginatedListOf${def.name}Read` });
  const idParams = z.strictObject({ id: pathId });
  const feature = def.conference ? ' Needs the conference feature of the caller’s party.' : '';
  // every write may answer 409: a unique value already taken (the error middleware maps unique
  // violations), or a row live children still point at (the definitions' own guards)
  const routes: RouteDefinition[] = [
    defineRoute({
      method: 'get',
      path: def.path,
      summary: `List ${def.name} records within the caller’s scope`,
      description: feature || undefined,
      tags,
      auth: readers,
      query: listQuery(def.collection),
      response: { description: `A page of ${def.name} records`, schema: page },
      textual: true,
      errors: [404],
      handler: ({ deps, principal, query }) => listResources(deps, principal, def, query),
    }),
    defineRoute({
      method: 'post',
      path: `${def.path}/search`,
      summary: `Search ${def.name} records`,
      description: feature || undefined,
      tags,
      auth: readers,
      query: PageQuery,
      body: searchBody(def.collection),
      response: { description: `A page of ${def.name} records`, schema: page },
      textual: true,
      handler: ({ deps, principal, query, body }) => searchResources(deps, principal, def, query, body),
    }),
    defineRoute({
      method: 'post',
      path: `${def.path}/batch`,
      summary: `Read many ${def.name} records by id`,
      description: `Ids unknown or outside the caller’s scope are left out.${feature}`,
      tags,
      auth: readers,
      body: IdList,
      response: { description: 'The records found, in the order asked', schema: z.array(def.read) },
      textual: true,
      handler: ({ deps, principal, body }) => batchReadResources(deps, principal, def, body.ids),
    }),
    defineRoute({
      method: 'get',
      path: `${def.path}/:id`,
      summary: `Read one ${def.name}`,
      description: feature || undefined,
      tags,
      auth: readers,
      params: idParams,
      response: { description: `The ${def.name}`, schema: def.read },
      textual: true,
      errors: [404],
      handler: ({ deps, principal, params }) => readResource(deps, principal, def, params.id),
    }),
    defineRoute({
      method: 'post',
      path: def.path,
      summary: `Create a ${def.name}`,
      description: `Emits the ${def.name} Created webhook.${feature}`,
      tags,
      auth: { allow: writers, permission: `${def.permission}.Create` },
      body: def.write,
      response: { description: `The new ${def.name}`, schema: def.read },
      errors: [404, 409],
      handler: ({ deps, principal, body }) =>
        createResource(deps, principal, def, body as Record<string, unknown>),
    }),
    defineRoute({
      method: 'patch',
      path: `${def.path}/:id`,
      summary: `Update a ${def.name} (JSON merge patch)`,
      description: `Emits the ${def.name} Updated webhook when something changed.${feature}`,
      tags,
      auth: { allow: writers, permission: `${def.permission}.Update` },
      params: idParams,
      body: patchSchema(def),
      response: { description: `The updated ${def.name}`, schema: def.read },
      errors: [404, 409],
      handler: ({ deps, principal, params, body }) =>
        updateResource(deps, principal, def, params.id, body as Record<string, unknown>),
    }),
  ];
  if (def.deletable !== false) {
    routes.push(
      defineRoute({
        method: 'delete',
        path: `${def.path}/:id`,
        summary: `Delete a ${def.name}`,
        description: `Soft delete; emits the ${def.name} Deleted webhook.${feature}`,
        tags,
        auth: { allow: writers, permission: `${def.permission}.Delete` },
        params: idParams,
        status: 204,
        errors: [404, 409],
        handler: ({ deps, principal, params }) => deleteResource(deps, principal, def, params.id),
      }),
    );
  }
  const own = def.routes?.(def) ?? [];
  const replaced = new Set(own.map((route) => `${route.method} ${route.path}`));
  return [...routes.filter((route) => !replaced.has(`${route.method} ${route.path}`)), ...own];
}
