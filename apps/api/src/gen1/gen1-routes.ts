import { ALL_PARTY_TYPES, MAX_PAGE_SIZE, PartyType } from '@platform/shared';
import { z } from 'zod';
import type { Principal } from '../auth/principal';
import { authorize } from '../http/router';
import { defineRoute, type RouteDefinition } from '../http/route';
import { AppError } from '../http/errors';
import { parseInput, pathId, wholeNumberText } from '../http/validate';
import { gen1AuthRoutes } from './gen1-auth-routes';
import {
  createView,
  deleteView,
  listView,
  readView,
  TIMELINE_EMBED_LIMIT,
  writeView,
} from './gen1-view-service';
import {
  entranceFields,
  flatsView,
  GEN1_VIEWS,
  orderTimelineView,
  resourceRead,
  writers,
  type Gen1View,
} from './gen1-views';

const tags = ['Gen1'];
const idParams = z.strictObject({ id: pathId });
const paging = {
  page: wholeNumberText('page', 1, 1_000_000).optional(),
  page_size: wholeNumberText('page_size', 1, MAX_PAGE_SIZE).optional(),
};

/** `companynews` → `Companynews`: the stem of a view's schema names in the OpenAPI document. */
const pascal = (name: string) => name.charAt(0).toUpperCase() + name.slice(1);

/** `fields` (Gen1 → Gen2 names) as an object schema, each field with its Gen2 read schema. */
function renamed(read: z.ZodType, fields: Readonly<Record<string, string>>, id: string) {
  const shape = read instanceof z.ZodObject ? (read.shape as Record<string, z.ZodType>) : {};
  return z
    .object(
      Object.fromEntries(Object.entries(fields).map(([gen1, gen2]) => [gen1, shape[gen2] ?? z.unknown()])),
    )
    .meta({ id });
}

const RECORDS = new Map<Gen1View, z.ZodType>();

/** A record of the view (as its writes answer it): the Gen2 read fields under Gen1 names. */
function recordSchema(view: Gen1View): z.ZodType {
  let schema = RECORDS.get(view);
  if (!schema) {
    schema = renamed(view.source.read, view.fields, `Gen1${pascal(view.name)}`);
    RECORDS.set(view, schema);
  }
  return schema;
}

/** What each view with `embeds` adds to its records, by view name (as EMBEDS in the view service). */
const EMBEDDED: Record<string, () => Record<string, z.ZodType>> = {
  objects: () => ({
    entrances: z.array(renamed(resourceRead('Entrance'), entranceFields, 'Gen1Entrance')),
    flats: z.array(recordSchema(flatsView)),
  }),
  orders: () => ({
    timeline: z.array(recordSchema(orderTimelineView)).meta({
      description: `The newest ${TIMELINE_EMBED_LIMIT} entries, oldest first (all: /ordertimeline?order_id=…)`,
    }),
    timeline_total: z.number().int(),
  }),
};

/** A record of the view with what it embeds: its single read answers it (and its list, if embedded there). */
function embeddedSchema(view: Gen1View): z.ZodType {
  const embedded = EMBEDDED[view.name];
  if (!view.embeds || !embedded) return recordSchema(view);
  return (recordSchema(view) as z.ZodObject)
    .extend(embedded())
    .meta({ id: `Gen1${pascal(view.name)}WithEmbeds` });
}

/** A Gen1 list of `record`: a page, or (under a bounding filter) the whole list. */
function listSchema(name: string, record: z.ZodType) {
  return z
    .object({
      data: z.array(record),
      page: z.number().int().optional().meta({ description: 'Paginated lists only' }),
      page_size: z.number().int().optional().meta({ description: 'Paginated lists only' }),
      total: z.number().int(),
      total_pages: z.number().int().optional().meta({ description: 'Paginated lists only' }),
      paginated: z.boolean(),
    })
    .meta({ id: `Gen1${pascal(name)}List` });
}

/** `page`, `page_size` and the view's id filters; anything else is refused. */
function listQuerySchema(view: Gen1View) {
  const filters = Object.fromEntries(
    (view.filters ?? []).map((name) => [name, wholeNumberText(name, 1, 2147483647).optional()]),
  );
  return z.strictObject({ ...paging, ...filters });
}

/** The view's Gen1 fields that are `fields` of its Gen2 write body, each with its Gen2 rules. */
function gen1Shape(view: Gen1View, fields: Iterable<string>): Record<string, z.ZodType> {
  const def = view.source.definition!;
  const wanted = new Set(fields);
  const shape: Record<string, z.ZodType> = {};
  for (const [gen1, gen2] of Object.entries(view.fields)) {
    if (wanted.has(gen2)) shape[gen1] = def.write.shape[gen2] as z.ZodType;
  }
  return shape;
}

/** The create body of a writable view: the Gen2 create body under Gen1 names. */
function createShape(view: Gen1View): Record<string, z.ZodType> {
  return gen1Shape(view, Object.keys(view.source.definition!.write.shape));
}

/**
 * The merge-patch body of a writable view: the Gen2 patch fields (no owning party, nothing
 * create-only) under their Gen1 names, each with its Gen2 rules.
 */
function patchShape(view: Gen1View): Record<string, z.ZodType> {
  const def = view.source.definition!;
  const patchable = new Set(Object.keys(def.write.shape).filter((field) => field !== 'partyId'));
  for (const field of def.createOnly ?? []) patchable.delete(field);
  return gen1Shape(view, patchable);
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

/**
 * The query and path parameters of the routes that parse them in their handlers, for the OpenAPI
 * document only (the router must not parse them before the handler's own checks).
 */
export const DOCUMENTED_INPUTS = new Map<RouteDefinition, { query?: z.ZodType; params?: z.ZodType }>();

function documented(route: RouteDefinition, inputs: { query?: z.ZodType; params?: z.ZodType }) {
  DOCUMENTED_INPUTS.set(route, inputs);
  return route;
}

/** The routes of one view: list, single read, and the writes when a Gen2 resource is behind it. */
function viewRoutes(view: Gen1View): RouteDefinition[] {
  const path = `/${view.name}`;
  const gen2 = view.source.entity;
  const record = recordSchema(view);
  const withEmbeds = embeddedSchema(view);
  const list = defineRoute({
    method: 'get',
    path,
    summary: `Gen1: list ${view.name} (Gen2 ${gen2})`,
    tags,
    auth: view.source.readers,
    response: {
      description: view.whole
        ? `A page of ${view.name}, or all of them under ${view.whole.filter}`
        : `A page of ${view.name}`,
      schema: listSchema(view.name, view.embeds?.list ? withEmbeds : record),
    },
    handler: ({ deps, principal, ctx }) => {
      if (view.embeds?.list) authorizeEmbeds(principal, view);
      const query = parseInput(listQuerySchema(view), { ...ctx.query }, 'query');
      return listView(deps, principal, view, query);
    },
  });
  const read = defineRoute({
    method: 'get',
    path: `${path}/:id`,
    summary: `Gen1: read one of ${view.name} (Gen2 ${gen2})`,
    tags,
    auth: view.source.readers,
    response: {
      description: `The ${view.noun}${view.embeds ? ' with what it embeds' : ''}`,
      schema: withEmbeds,
    },
    errors: [404],
    handler: ({ deps, principal, ctx }) => {
      authorizeEmbeds(principal, view);
      const { id } = parseInput(idParams, ctx.params, 'path parameters');
      return readView(deps, principal, view, id);
    },
  });
  // query and path are parsed in the handlers, after the embeds' permissions (see authorizeEmbeds)
  return [
    documented(list, { query: listQuerySchema(view) }),
    documented(read, { params: idParams }),
    ...writeRoutes(view, record),
  ];
}

/**
 * The writes of a view with a Gen2 resource behind it: POST (create), PUT and PATCH (update) and,
 * when the resource is deletable, DELETE, each through the Gen2 write path of the resource with
 * the guards of the Gen2 route. One mechanism for every view: nothing here names a view.
 */
function writeRoutes(view: Gen1View, schema: z.ZodType): RouteDefinition[] {
  const def = view.source.definition;
  if (!def) return [];
  const path = `/${view.name}`;
  const gen2 = view.source.entity;
  const record = (verb: string) => ({
    description: `The ${verb} ${view.noun}, as its list shows it (no embeds)`,
    schema,
  });
  const routes: RouteDefinition[] = [
    defineRoute({
      method: 'post',
      path,
      summary: `Gen1: create one of ${view.name} (Gen2 ${gen2} create)`,
      description: `Emits the ${gen2} Created webhook, as the Gen2 create does.`,
      tags,
      auth: writers(def, 'Create'),
      body: z.strictObject(createShape(view)).meta({ id: `Gen1${pascal(view.name)}Create` }),
      response: record('new'),
      errors: [404, 409],
      handler: ({ deps, principal, body }) =>
        createView(deps, principal, view, body as Record<string, unknown>),
    }),
  ];
  const bodies = {
    put: z.strictObject(putShape(view)).meta({ id: `Gen1${pascal(view.name)}Replace` }),
    patch: z
      .strictObject(patchShape(view))
      .partial()
      .meta({ id: `Gen1${pascal(view.name)}Patch` }),
  };
  for (const method of ['put', 'patch'] as const) {
    routes.push(
      defineRoute({
        method,
        path: `${path}/:id`,
        summary: `Gen1: ${method === 'put' ? 'replace' : 'update'} one of ${view.name} (Gen2 ${gen2} update)`,
        description: `Emits the ${gen2} Updated webhook when something changed, as the Gen2 update does.`,
        tags,
        auth: writers(def, 'Update'),
        params: idParams,
        body: bodies[method],
        response: record('updated'),
        errors: [404, 409],
        handler: ({ deps, principal, params, body }) =>
          writeView(deps, principal, view, params.id, body as Record<string, unknown>),
      }),
    );
  }
  if (def.deletable !== false) {
    routes.push(
      defineRoute({
        method: 'delete',
        path: `${path}/:id`,
        summary: `Gen1: delete one of ${view.name} (Gen2 ${gen2} delete)`,
        description: `Soft delete; emits the ${gen2} Deleted webhook, as the Gen2 delete does.`,
        tags,
        auth: writers(def, 'Delete'),
        params: idParams,
        status: 204,
        errors: [404, 409],
        handler: ({ deps, principal, params }) => deleteView(deps, principal, view, params.id),
      }),
    );
  }
  return routes;
}

/** Gen1 "companytype" (Gen2 AccountRole): the party types (docs/api.md#party-types), a fixed list. */
const COMPANY_TYPES: readonly { id: PartyType; name: string }[] = [
  { id: PartyType.Admin, name: 'Admin' },
  { id: PartyType.PropertyManagementCompany, name: 'Property Management Company' },
  { id: PartyType.PoolManager, name: 'Pool Manager' },
  { id: PartyType.Contractor, name: 'Contractor' },
  { id: PartyType.User, name: 'User' },
  { id: PartyType.InsuranceBroker, name: 'Insurance Broker' },
  { id: PartyType.Insurer, name: 'Insurer' },
];

const CompanyType = z
  .object({
    id: z
      .number()
      .int()
      .meta({ description: 'The party type (account role) value: `company_type` elsewhere' }),
    name: z.string(),
  })
  .meta({ id: 'Gen1Companytype' });

/** Every caller may read the account roles: they are the same for everyone, like a token's claim. */
const everyone = { allow: ALL_PARTY_TYPES };

const companyTypeRoutes: RouteDefinition[] = [
  defineRoute({
    method: 'get',
    path: '/companytype',
    summary: 'Gen1: list company types (Gen2 AccountRole: the party types)',
    tags,
    auth: everyone,
    query: z.strictObject({}),
    response: {
      description: 'Every company type, whole',
      schema: z
        .object({ data: z.array(CompanyType), total: z.number().int(), paginated: z.literal(false) })
        .meta({ id: 'Gen1CompanytypeList' }),
    },
    handler: () => ({ data: COMPANY_TYPES, total: COMPANY_TYPES.length, paginated: false }),
  }),
  defineRoute({
    method: 'get',
    path: '/companytype/:id',
    summary: 'Gen1: read one company type (Gen2 AccountRole)',
    tags,
    auth: everyone,
    params: idParams,
    response: { description: 'The company type', schema: CompanyType },
    errors: [404],
    handler: ({ params }) => {
      const found = COMPANY_TYPES.find((type) => type.id === params.id);
      if (!found) throw new AppError('NotFound', `company type ${params.id} was not found`);
      return found;
    },
  }),
];

/**
 * Gen1 views with no Gen2 resource behind them yet (docs/gen1-to-gen2.md#not-covered-and-why), by Gen1 name → the missing Gen2
 * resource. Every verb on them answers 501 naming it, not the router's bare 404.
 */
export const UNSERVED_VIEWS: Readonly<Record<string, string>> = {
  projects: 'Tenant',
  properties: 'Attribute',
  measurements: 'ConsumptionMeter',
  objectaccess: 'SmartLock',
  todo: 'UserTask',
};

/** The routes of the unserved views, which the Gen1 OpenAPI document lists with their 501. */
export const UNSERVED_ROUTES = new Set<RouteDefinition>();

function unservedRoutes(name: string, gen2: string): RouteDefinition[] {
  const verbs = [
    ['get', `/${name}`],
    ['post', `/${name}`],
    ['get', `/${name}/:id`],
    ['put', `/${name}/:id`],
    ['patch', `/${name}/:id`],
    ['delete', `/${name}/:id`],
  ] as const;
  return verbs.map(([method, path]) => {
    const route = defineRoute({
      method,
      path,
      summary: `Gen1: ${name} is not served (no Gen2 ${gen2} resource yet)`,
      description: `Answers 501: Gen2 has no ${gen2} resource for the Gen1 ${name} view to map onto.`,
      tags,
      auth: everyone,
      handler: () => {
        throw new AppError(
          'NotImplemented',
          `Gen1 /${name} is not served: it maps to the Gen2 resource ${gen2}, which this API does not have yet`,
        );
      },
    });
    UNSERVED_ROUTES.add(route);
    return path.endsWith('/:id') ? documented(route, { params: idParams }) : route;
  });
}

/** Every Gen1 route, at root paths (docs/gen1-to-gen2.md); served with Gen1 tokens only. */
export const GEN1_ROUTES: readonly RouteDefinition[] = [
  ...gen1AuthRoutes,
  ...GEN1_VIEWS.flatMap(viewRoutes),
  ...companyTypeRoutes,
  ...Object.entries(UNSERVED_VIEWS).flatMap(([name, gen2]) => unservedRoutes(name, gen2)),
];
