import { ALL_PARTY_TYPES, PartyType, type PermissionResource } from '@platform/shared';
import type { Knex } from '@platform/db';
import type { z } from 'zod';
import type { Principal } from '../auth/principal';
import type { WriteContext } from '../write-path';
import type { CollectionSpec, FieldSpec, FieldType } from '../http/collection';
import type { RouteDefinition } from '../http/route';

/** A column of a resource row, as Postgres returns it. */
export type Row = Record<string, unknown> & { id: number };

/** A write field that references another resource by id; the id must be live and in scope. */
export interface Relation {
  /** The table of the referenced resource. */
  table: string;
  /** Its name in messages, e.g. 'Property'. */
  name: string;
  /**
   * The referenced table's column that scoping checks; default `party_id`. A reference to a
   * party itself (a tenant, a contractor) uses `id`: parties have no owning party column.
   */
  partyColumn?: string;
}

/**
 * One declaration per resource; the API derives list, search, batch read, read, create, partial
 * update, delete and their OpenAPI entries from it. Adding a resource is one file.
 */
export interface ResourceDefinition {
  /** The spec's entity name (`Property`); also the webhook entityName and OpenAPI tag. */
  name: string;
  /** Collection path, `/api/properties`. */
  path: string;
  table: string;
  /** The permission resource its operations check (`Property.Create`, …). */
  permission: PermissionResource;
  /** Read shape (named with `.meta({ id: 'PropertyRead' })`). */
  read: z.ZodType;
  /** Create body (named `PropertyWrite`); a merge-patch body is derived from it. */
  write: z.ZodObject;
  /** Write field → column. Every write field except `partyId` must be listed. */
  columns: Record<string, string>;
  /** Write fields that reference other resources. */
  relations?: Record<string, Relation>;
  /** Sortable and searchable attributes of the read shape. */
  collection: CollectionSpec;
  /** A row as its read shape. */
  present(row: Row): unknown;
  /** The column holding the owning party, which scoping uses; default `party_id`. */
  partyColumn?: string;
  /**
   * More party columns that make a row readable (never writable) by the parties in whose scope
   * they fall, e.g. the contractor a work order is addressed to.
   */
  readableBy?: readonly string[];
  /** Party types that may read; default every type (each sees only its scope). */
  readers?: readonly PartyType[];
  /** Party types that may create, update and delete; default Admin and Property Management Company. */
  writers?: readonly PartyType[];
  /** False for resources the API never deletes (ProcessFeed: docs/resources.md#processes). */
  deletable?: boolean;
  /** Behind the caller's party conference feature flag. */
  conference?: boolean;
  /** Write fields a create sets and a merge patch may not change (left out of the patch body). */
  createOnly?: readonly string[];
  /**
   * The owning columns of a new row, instead of `partyColumn` = the body's `partyId` or the
   * caller's party (Party: a new party is owned through `managed_by_party_id`, not its own id).
   */
  owner?(
    body: Record<string, unknown>,
    context: { trx: Knex.Transaction; principal: Principal },
  ): Promise<Record<string, unknown>>;
  /**
   * Extra checks of a create or update (and changes to other rows it entails, each captured),
   * inside its transaction, before the row is written. `current` is the row an update changes.
   */
  validate?(values: Record<string, unknown>, context: WriteContext & { current?: Row }): Promise<void>;
  /**
   * Columns the service sets itself, never a client (the author, a completion time): on create
   * from the new row's values, on update from the patch's columns and the `current` row. They
   * are written with the row and seen by `validate`.
   */
  derive?(
    values: Record<string, unknown>,
    context: WriteContext & { current?: Row },
  ): Record<string, unknown> | Promise<Record<string, unknown>>;
  /** Refusals (and changes to other rows, each captured) of a delete, before the row is deleted. */
  beforeDelete?(current: Row, context: WriteContext): Promise<void>;
  /**
   * The columns reads and writes return, when not every one: a large column (File's bytes, served
   * by a route of its own) stays out of lists, reads and write results. Default all (`*`).
   */
  selectColumns?: readonly string[];
  /**
   * Routes of its own, served next to the derived ones; one with the method and path of a
   * derived route replaces it (File: the multipart upload replaces the JSON create).
   */
  routes?(def: ResourceDefinition): RouteDefinition[];
}

export const DEFAULT_READERS = ALL_PARTY_TYPES;
export const DEFAULT_WRITERS = [PartyType.Admin, PartyType.PropertyManagementCompany] as const;

/** Declares a resource (an identity function that keeps the declaration typed). */
export function defineResource(definition: ResourceDefinition): ResourceDefinition {
  return definition;
}

/** A field's column: its snake_case name (`livingArea` → `living_area`). */
export const snake = (field: string) => field.replace(/[A-Z]/g, (letter) => `_${letter.toLowerCase()}`);

/** `ResourceDefinition.columns` of write fields each stored in its snake_case column. */
export const snakeColumns = (fields: readonly string[]): Record<string, string> =>
  Object.fromEntries(fields.map((field) => [field, snake(field)]));

/** `ResourceDefinition.columns` when every field of `write` but `partyId` has its snake_case column. */
export const writeColumns = (write: z.ZodObject): Record<string, string> =>
  snakeColumns(Object.keys(write.shape).filter((field) => field !== 'partyId'));

/** `CollectionSpec.fields` of read fields each in the snake_case column of `table`, with its type. */
export const tableFields = (table: string, fields: Record<string, FieldType>): Record<string, FieldSpec> =>
  Object.fromEntries(
    Object.entries(fields).map(([field, type]) => [field, { column: `${table}.${snake(field)}`, type }]),
  );
