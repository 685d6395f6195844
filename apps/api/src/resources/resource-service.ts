import { PartyType, TokenScope, type Page } from '@platform/shared';
import type { Knex } from '@platform/db';
import type { AppDeps } from '../deps';
import type { Principal } from '../auth/principal';
import { runWrite } from '../write-path';
import { applyFilters, applyListSort, applySort, type ListQuery, type SearchBody } from '../http/collection';
import { AppError, fieldError } from '../http/errors';
import { offsetOf, pageOf, pageSql, paginate, type PageQuery } from '../http/pagination';
import { scopeToParties, seesAllParties } from '../http/scope';
import { compileTemplate, type Compilable, type StatementTemplate } from '../http/statement-template';
import type { ResourceDefinition, Row } from './resource';

const partyColumnOf = (def: ResourceDefinition) => def.partyColumn ?? 'party_id';
const returned = (def: ResourceDefinition) => (def.selectColumns ? [...def.selectColumns] : '*');

/**
 * Live rows of `def` the caller may see; to `read`, also those whose `readableBy` columns name a
 * party in its scope (a write only ever reaches rows the caller's parties own). Exported for the
 * views built on the registry (Gen1), so they scope exactly as its reads do. It depends on the
 * caller only through `seesAllParties` and its party id: `template` compiles it once per scope.
 */
export function visible(
  knex: Knex,
  principal: Principal,
  def: ResourceDefinition,
  purpose: 'read' | 'write' = 'read',
): Knex.QueryBuilder {
  const columns = def.selectColumns?.map((column) => `${def.table}.${column}`) ?? `${def.table}.*`;
  const query = knex(def.table).select(columns).whereNull(`${def.table}.deleted`);
  const owner = `${def.table}.${partyColumnOf(def)}`;
  const extra = purpose === 'read' ? (def.readableBy ?? []) : [];
  if (extra.length === 0 || seesAllParties(principal)) {
    return scopeToParties(query, owner, principal);
  }
  return query.where((any) => {
    scopeToParties(any, owner, principal);
    for (const column of extra) {
      any.orWhere((also) => scopeToParties(also, `${def.table}.${column}`, principal));
    }
  });
}

type Purpose = 'read' | 'write';

/** A caller standing for every caller of one scope while a statement is compiled (`template`). */
function standIn(principal: Principal, partyId: number): Principal {
  const admin = seesAllParties(principal);
  return {
    accountId: 0,
    partyId,
    partyName: '',
    partyType: admin ? PartyType.Admin : PartyType.PropertyManagementCompany,
    email: '',
    scope: TokenScope.Platform,
    permissions: new Set(),
  };
}

const templates = new WeakMap<ResourceDefinition, Map<string, StatementTemplate<string>>>();

/**
 * The statement `key` of `def` for callers of `principal`'s scope (every party but Admin binds
 * its party id, Admin sees all), compiled on its first use and kept: `build` gets a stand-in
 * caller whose party id, like every parameter in `parameters`, is a placeholder.
 */
function template<P extends string>(
  knex: Knex,
  def: ResourceDefinition,
  principal: Principal,
  key: string,
  parameters: readonly P[],
  build: (caller: Principal, placeholders: Record<P | 'party', number>) => Compilable,
): StatementTemplate<P | 'party'> {
  let byKey = templates.get(def);
  if (!byKey) templates.set(def, (byKey = new Map()));
  const scopedKey = `${seesAllParties(principal) ? 'all' : 'party'} ${key}`;
  let compiled = byKey.get(scopedKey);
  if (!compiled) {
    compiled = compileTemplate<P | 'party'>(['party', ...parameters], (placeholders) =>
      build(standIn(principal, placeholders.party), placeholders),
    );
    byKey.set(scopedKey, compiled);
  }
  return compiled;
}

/** Runs a compiled statement on `knex` (or a transaction) with `values`; its rows. */
async function run<P extends string>(
  knex: Knex,
  statement: StatementTemplate<P>,
  values: Record<P, unknown>,
): Promise<Row[]> {
  const result = await knex.raw<{ rows: Row[] }>(statement.sql, statement.bind(values) as Knex.RawBinding[]);
  return result.rows;
}

/** The visible row `id` (to read, or to write: see `visible`), by a statement compiled once. */
async function visibleRow(
  knex: Knex,
  principal: Principal,
  def: ResourceDefinition,
  id: number,
  purpose: Purpose,
): Promise<Row> {
  const statement = template(knex, def, principal, `row ${purpose}`, ['id'], (caller, { id }) =>
    visible(knex, caller, def, purpose).where(`${def.table}.id`, id).first(),
  );
  const [row] = await run(knex, statement, { party: principal.partyId, id });
  if (!row) throw new AppError('NotFound', `${def.name} ${id} was not found`);
  return row;
}

/** Conference resources need the caller's party to have the conference feature (Admin always has it). */
async function assertFeature(knex: Knex, principal: Principal, def: ResourceDefinition): Promise<void> {
  if (!def.conference || principal.partyType === PartyType.Admin) return;
  const party = await knex('parties').where({ id: principal.partyId }).first('conference_enabled');
  if (!party?.conference_enabled) {
    throw new AppError('Forbidden', 'The conference feature is not enabled for your party');
  }
}

export async function listResources(
  deps: AppDeps,
  principal: Principal,
  def: ResourceDefinition,
  list: ListQuery,
): Promise<Page<unknown>> {
  await assertFeature(deps.knex, principal, def);
  const { knex } = deps;
  const sort = { SortByAttributeName: list.SortByAttributeName, AscendingOrder: list.AscendingOrder };
  // one statement per scope and sort order, its page and total count in one (`pageSql`)
  const statement = template(
    knex,
    def,
    principal,
    `list ${sort.SortByAttributeName ?? ''} ${sort.AscendingOrder}`,
    ['limit', 'offset'],
    (caller, { limit, offset }) =>
      pageSql(applyListSort(visible(knex, caller, def), def.collection, sort as ListQuery), limit, offset),
  );
  const rows = await run(knex, statement, {
    party: principal.partyId,
    limit: list.PageSize,
    offset: offsetOf(list),
  });
  return pageOf(rows, list, def.present);
}

export async function searchResources(
  deps: AppDeps,
  principal: Principal,
  def: ResourceDefinition,
  page: PageQuery,
  search: SearchBody,
): Promise<Page<unknown>> {
  await assertFeature(deps.knex, principal, def);
  const query = applyFilters(visible(deps.knex, principal, def), def.collection, search);
  return paginate(applySort(query, def.collection, search.sort), page, def.present);
}

/** The visible rows among `ids`, in the order asked, each once; others are left out. */
export async function batchReadResources(
  deps: AppDeps,
  principal: Principal,
  def: ResourceDefinition,
  ids: number[],
): Promise<unknown[]> {
  await assertFeature(deps.knex, principal, def);
  const rows: Row[] = await visible(deps.knex, principal, def).whereIn(`${def.table}.id`, ids);
  const byId = new Map(rows.map((row) => [row.id, row]));
  return [...new Set(ids)].flatMap((id) => {
    const row = byId.get(id);
    return row ? [def.present(row)] : [];
  });
}

export async function readResource(
  deps: AppDeps,
  principal: Principal,
  def: ResourceDefinition,
  id: number,
): Promise<unknown> {
  await assertFeature(deps.knex, principal, def);
  return def.present(await visibleRow(deps.knex, principal, def, id, 'read'));
}

/**
 * The visible row `id` with only `columns`, for a resource's own routes (a column reads leave
 * out, such as a file's bytes): the same scope and 404 as `readResource`.
 */
export async function readColumns(
  deps: AppDeps,
  principal: Principal,
  def: ResourceDefinition,
  id: number,
  columns: readonly string[],
): Promise<Row> {
  await assertFeature(deps.knex, principal, def);
  const row: Row | undefined = await visible(deps.knex, principal, def)
    .clearSelect()
    .select(columns.map((column) => `${def.table}.${column}`))
    .where(`${def.table}.id`, id)
    .first();
  if (!row) throw new AppError('NotFound', `${def.name} ${id} was not found`);
  return row;
}

/** The visible row `id`, locked for the rest of the transaction; 404 when the caller cannot see it. */
async function lockVisible(
  trx: Knex.Transaction,
  principal: Principal,
  def: ResourceDefinition,
  id: number,
): Promise<Row> {
  const row: Row | undefined = await visible(trx, principal, def, 'write')
    .where(`${def.table}.id`, id)
    .forUpdate()
    .first();
  if (!row) throw new AppError('NotFound', `${def.name} ${id} was not found`);
  return row;
}

/**
 * Updates the visible row `id` to `values` and answers it as updated; 404 when the caller cannot
 * see it. The update is scoped itself, so it needs no read before it to answer the 404.
 */
async function updateVisible(
  trx: Knex.Transaction,
  principal: Principal,
  def: ResourceDefinition,
  id: number,
  values: Record<string, unknown>,
): Promise<Row> {
  const [row] = (await visible(trx, principal, def, 'write')
    .where(`${def.table}.id`, id)
    .update(values)
    .returning(returned(def))) as Row[];
  if (!row) throw new AppError('NotFound', `${def.name} ${id} was not found`);
  return row;
}

/** Write fields → columns, for the fields present in `body`. */
function toColumns(def: ResourceDefinition, body: Record<string, unknown>): Record<string, unknown> {
  const values: Record<string, unknown> = {};
  for (const [field, value] of Object.entries(body)) {
    const column = def.columns[field];
    if (column && value !== undefined) values[column] = value;
  }
  return values;
}

/** Every referenced id in `body` must be a live row the caller can see: else a 400 naming the field. */
async function checkRelations(
  trx: Knex.Transaction,
  principal: Principal,
  def: ResourceDefinition,
  body: Record<string, unknown>,
): Promise<void> {
  for (const [field, relation] of Object.entries(def.relations ?? {})) {
    const id = body[field];
    if (id === undefined || id === null) continue;
    const query = trx(relation.table).where({ id }).whereNull('deleted').first('id');
    const partyColumn = `${relation.table}.${relation.partyColumn ?? 'party_id'}`;
    const found = await scopeToParties(query, partyColumn, principal);
    if (!found) throw fieldError(field, `${relation.name} ${String(id)} does not exist`);
  }
}

/** The party a new row belongs to: the given `partyId` (in the caller's scope) or the caller's own. */
async function owningParty(trx: Knex.Transaction, principal: Principal, partyId: unknown): Promise<number> {
  if (partyId === undefined || partyId === null) return principal.partyId;
  const query = trx('parties').where({ id: partyId }).whereNull('deleted').first('id');
  const found = await scopeToParties(query, 'parties.id', principal);
  if (!found) throw fieldError('partyId', `Party ${String(partyId)} does not exist`);
  return partyId as number;
}

/**
 * Creates a row from a write body; `set` adds columns a resource's own route computed from input
 * that is not JSON (an upload's bytes, size and hash).
 */
export async function createResource(
  deps: AppDeps,
  principal: Principal,
  def: ResourceDefinition,
  body: Record<string, unknown>,
  set: Record<string, unknown> = {},
): Promise<unknown> {
  await assertFeature(deps.knex, principal, def);
  return runWrite(deps, principal, async (context) => {
    const { trx, now, capture } = context;
    const owner = def.owner
      ? await def.owner(body, { trx, principal })
      : { [partyColumnOf(def)]: await owningParty(trx, principal, body.partyId) };
    await checkRelations(trx, principal, def, body);
    const values = { ...toColumns(def, body), ...set, ...owner, created: now };
    Object.assign(values, await def.derive?.(values, context));
    await def.validate?.(values, context);
    const [row] = (await trx(def.table).insert(values).returning(returned(def))) as Row[];
    const read = def.present(row!);
    await capture(def.name, 1, row!.id, read);
    return read;
  });
}

export async function updateResource(
  deps: AppDeps,
  principal: Principal,
  def: ResourceDefinition,
  id: number,
  patch: Record<string, unknown>,
): Promise<unknown> {
  await assertFeature(deps.knex, principal, def);
  const values = toColumns(def, patch);
  // an empty merge patch changes nothing, so it records no change either: a read of the row
  if (Object.keys(values).length === 0) {
    return def.present(await visibleRow(deps.knex, principal, def, id, 'write'));
  }
  return runWrite(deps, principal, async (context) => {
    const { trx, now, capture } = context;
    let row: Row;
    if (def.derive || def.validate) {
      // these see the row as it is: read and lock it first
      const current = await lockVisible(trx, principal, def, id);
      await checkRelations(trx, principal, def, patch);
      Object.assign(values, await def.derive?.(values, { ...context, current }));
      await def.validate?.({ ...current, ...values }, { ...context, current });
      row = await updateVisible(trx, principal, def, id, { ...values, last_modified: now });
    } else {
      // the scoped update answers the 404 (before any 400 of a relation, as above); a refused
      // relation rolls it back
      row = await updateVisible(trx, principal, def, id, { ...values, last_modified: now });
      await checkRelations(trx, principal, def, patch);
    }
    const read = def.present(row);
    await capture(def.name, 2, id, read);
    return read;
  });
}

export async function deleteResource(
  deps: AppDeps,
  principal: Principal,
  def: ResourceDefinition,
  id: number,
): Promise<void> {
  await assertFeature(deps.knex, principal, def);
  await runWrite(deps, principal, async (context) => {
    const { trx, now, capture } = context;
    if (def.beforeDelete) await def.beforeDelete(await lockVisible(trx, principal, def, id), context);
    const row = await updateVisible(trx, principal, def, id, { deleted: now, last_modified: now });
    await capture(def.name, 3, id, def.present(row));
  });
}
