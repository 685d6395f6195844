import { DEFAULT_PAGE_SIZE } from '@platform/shared';
import type { Knex } from '@platform/db';
import type { Principal } from '../auth/principal';
import type { AppDeps } from '../deps';
import { AppError, fieldError } from '../http/errors';
import { paginate } from '../http/pagination';
import { RESOURCES } from '../resources/index';
import type { ResourceDefinition, Row } from '../resources/resource';
import { createResource, deleteResource, updateResource, visible } from '../resources/resource-service';
import { entranceFields, flatsView, orderTimelineView, type Gen1View } from './gen1-views';

/** A record as a Gen1 view shows it. */
export type Gen1Record = Record<string, unknown> & { id: number };

/** A paginated Gen1 list: the collection can grow without bound, so it comes a page at a time. */
export interface Gen1Page {
  data: Gen1Record[];
  page: number;
  page_size: number;
  total: number;
  total_pages: number;
  paginated: true;
}

/** A Gen1 list answered whole: a Gen2 rule bounds it (or it is always empty). */
export interface Gen1WholeList {
  data: Gen1Record[];
  total: number;
  paginated: false;
}

/** The query of a Gen1 list: `page` (from 1), `page_size` (1–100) and the view's id filters. */
export type Gen1ListQuery = { page?: number; page_size?: number } & Record<string, number | undefined>;

/** How many of an order's timeline entries its single read embeds: the newest ones. */
export const TIMELINE_EMBED_LIMIT = 100;

const definition = (name: string): ResourceDefinition => RESOURCES.find((def) => def.name === name)!;

/** A Gen2 read shape under the Gen1 names of `fields`, in their order; other Gen2 fields are left out. */
export function toGen1(fields: Readonly<Record<string, string>>, read: Record<string, unknown>): Gen1Record {
  return Object.fromEntries(Object.entries(fields).map(([gen1, gen2]) => [gen1, read[gen2]])) as Gen1Record;
}

/** A Gen1 write body under the Gen2 names of the view's fields. */
export function toGen2(view: Gen1View, body: Record<string, unknown>): Record<string, unknown> {
  const gen2: Record<string, unknown> = {};
  for (const [field, value] of Object.entries(body)) {
    const name = view.fields[field];
    if (name === undefined) throw new Error(`${view.name} has no field ${field}`);
    gen2[name] = value;
  }
  return gen2;
}

/** The Gen1 name of a Gen2 field of the view, or the name itself when the view does not show it. */
function gen1Name(view: Gen1View, gen2: string): string {
  return Object.entries(view.fields).find(([, name]) => name === gen2)?.[0] ?? gen2;
}

/**
 * An error of the Gen2 write path, told in Gen1 terms: the field names of `errors` (and of a
 * detail that starts with one) and the record's noun. Everything else passes unchanged.
 */
function inGen1Terms(view: Gen1View, id: number | undefined, error: unknown): unknown {
  if (!(error instanceof AppError)) return error;
  if (error.code === 'NotFound' && id !== undefined)
    return new AppError('NotFound', `${view.noun} ${id} was not found`);
  if (!error.errors) return error;
  const errors = Object.fromEntries(
    Object.entries(error.errors).map(([field, messages]) => [gen1Name(view, field), messages]),
  );
  const detail = error.detail?.replace(/^(\w+):/, (_, field: string) => `${gen1Name(view, field)}:`);
  return new AppError(error.code, detail, errors, error.headers);
}

/** Groups `rows` by the value of `column`. */
function groupBy(rows: Row[], column: string): Map<unknown, Row[]> {
  const groups = new Map<unknown, Row[]>();
  for (const row of rows) {
    const group = groups.get(row[column]);
    if (group) group.push(row);
    else groups.set(row[column], [row]);
  }
  return groups;
}

/** Objects come with their entrances and flats (each as the caller may see them). */
async function embedInObjects(knex: Knex, principal: Principal, objects: Gen1Record[]): Promise<void> {
  const ids = objects.map((object) => object.id);
  const entranceDef = definition('Entrance');
  const unitDef = definition('Unit');
  const [entrances, units] = await Promise.all([
    visible(knex, principal, entranceDef).whereIn('entrances.property_id', ids).orderBy('entrances.id'),
    visible(knex, principal, unitDef).whereIn('units.property_id', ids).orderBy('units.id'),
  ]);
  const entrancesOf = groupBy(entrances as Row[], 'property_id');
  const unitsOf = groupBy(units as Row[], 'property_id');
  for (const object of objects) {
    object.entrances = (entrancesOf.get(object.id) ?? []).map((row) =>
      toGen1(entranceFields, entranceDef.present(row) as Record<string, unknown>),
    );
    object.flats = (unitsOf.get(object.id) ?? []).map((row) =>
      toGen1(flatsView.fields, unitDef.present(row) as Record<string, unknown>),
    );
  }
}

/**
 * An order comes with its timeline: the newest TIMELINE_EMBED_LIMIT entries, oldest first, and
 * `timeline_total`; a longer timeline is read in full from /ordertimeline?order_id=….
 */
async function embedInOrder(knex: Knex, principal: Principal, order: Gen1Record): Promise<void> {
  const feedDef = definition('ProcessFeed');
  const entries = () => visible(knex, principal, feedDef).where('process_feed.process_id', order.id);
  const [rows, counted] = await Promise.all([
    entries().orderBy('process_feed.id', 'desc').limit(TIMELINE_EMBED_LIMIT),
    entries().clearSelect().count<{ count: string }[]>({ count: '*' }),
  ]);
  order.timeline = (rows as Row[])
    .reverse()
    .map((row) => toGen1(orderTimelineView.fields, feedDef.present(row) as Record<string, unknown>));
  order.timeline_total = Number(counted[0]?.count ?? 0);
}

/** What each view with `embeds` adds to its records, by view name. */
const EMBEDS: Record<string, (knex: Knex, principal: Principal, records: Gen1Record[]) => Promise<void>> = {
  objects: embedInObjects,
  orders: async (knex, principal, orders) => {
    for (const order of orders) await embedInOrder(knex, principal, order);
  },
};

/** Adds what `view` embeds to `records`. */
async function embed(deps: AppDeps, principal: Principal, view: Gen1View, records: Gen1Record[]) {
  const embedder = EMBEDS[view.name];
  if (!embedder) throw new Error(`${view.name} declares embeds but has no embedder`);
  if (records.length > 0) await embedder(deps.knex, principal, records);
}

/** The rows of `view` the caller sees, filtered by the query's id filters, in id order. */
function filteredRows(deps: AppDeps, principal: Principal, view: Gen1View, query: Gen1ListQuery) {
  const { source } = view;
  const rows = source.rows(deps.knex, principal);
  for (const filter of view.filters ?? []) {
    const value = query[filter];
    if (value === undefined) continue;
    const column = source.collection.fields[view.fields[filter]!]!.column;
    rows.where(column, value);
  }
  return rows.orderBy(source.idColumn);
}

/**
 * A Gen1 list: a page (`paginated: true`), or the whole list when the query names the parent
 * under which a Gen2 rule bounds it (`paginated: false`).
 */
export async function listView(
  deps: AppDeps,
  principal: Principal,
  view: Gen1View,
  query: Gen1ListQuery,
): Promise<Gen1Page | Gen1WholeList> {
  const rows = filteredRows(deps, principal, view, query);
  const present = (row: Row) => toGen1(view.fields, view.source.present(row));
  const embeds = view.embeds?.list === true;
  if (view.whole && query[view.whole.filter] !== undefined) {
    for (const name of ['page', 'page_size'] as const) {
      if (query[name] !== undefined) {
        throw fieldError(
          name,
          `The ${view.name} of one ${view.whole.filter} are answered whole (at most ${view.whole.max}), not in pages`,
        );
      }
    }
    const data = ((await rows) as Row[]).map(present);
    if (embeds) await embed(deps, principal, view, data);
    return { data, total: data.length, paginated: false };
  }
  const page = await paginate(
    rows,
    { PageNumber: query.page ?? 1, PageSize: query.page_size ?? DEFAULT_PAGE_SIZE },
    present,
  );
  if (embeds) await embed(deps, principal, view, page.items);
  return {
    data: page.items,
    page: page.pageNumber,
    page_size: page.pageSize,
    total: page.totalCount,
    total_pages: page.totalPages,
    paginated: true,
  };
}

/** One record of `view` with what it embeds; 404 when the caller cannot see it. */
export async function readView(
  deps: AppDeps,
  principal: Principal,
  view: Gen1View,
  id: number,
): Promise<Gen1Record> {
  const row: Row | undefined = await view.source
    .rows(deps.knex, principal)
    .where(view.source.idColumn, id)
    .first();
  if (!row) throw new AppError('NotFound', `${view.noun} ${id} was not found`);
  const record = toGen1(view.fields, view.source.present(row));
  if (view.embeds) await embed(deps, principal, view, [record]);
  return record;
}

/** The Gen2 resource a view writes through; only views that have one get write routes. */
function writableDefinition(view: Gen1View): ResourceDefinition {
  const def = view.source.definition;
  if (!def) throw new Error(`${view.name} is not writable`);
  return def;
}

/** Runs a Gen2 write for a Gen1 view, telling its errors in Gen1 terms. */
async function inGen1<T>(view: Gen1View, id: number | undefined, write: () => Promise<T>): Promise<T> {
  try {
    return await write();
  } catch (error) {
    throw inGen1Terms(view, id, error);
  }
}

/**
 * A Gen1 create (POST): the body under Gen2 names, through the Gen2 create of the view's
 * resource, so scope, rules, change capture and webhooks are the Gen2 ones. Answers the new
 * record as the view's list shows it (no embeds).
 */
export function createView(
  deps: AppDeps,
  principal: Principal,
  view: Gen1View,
  body: Record<string, unknown>,
): Promise<Gen1Record> {
  const def = writableDefinition(view);
  return inGen1(view, undefined, async () =>
    toGen1(
      view.fields,
      (await createResource(deps, principal, def, toGen2(view, body))) as Record<string, unknown>,
    ),
  );
}

/**
 * A Gen1 update (PUT or PATCH): the body under Gen2 names, through the Gen2 update of the view's
 * resource. Answers the record as the view's list shows it (no embeds).
 */
export function writeView(
  deps: AppDeps,
  principal: Principal,
  view: Gen1View,
  id: number,
  body: Record<string, unknown>,
): Promise<Gen1Record> {
  const def = writableDefinition(view);
  return inGen1(view, id, async () =>
    toGen1(
      view.fields,
      (await updateResource(deps, principal, def, id, toGen2(view, body))) as Record<string, unknown>,
    ),
  );
}

/** A Gen1 delete: the Gen2 (soft) delete of the view's resource. */
export function deleteView(deps: AppDeps, principal: Principal, view: Gen1View, id: number): Promise<void> {
  const def = writableDefinition(view);
  return inGen1(view, id, () => deleteResource(deps, principal, def, id));
}
