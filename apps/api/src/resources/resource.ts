import { ALL_PARTY_TYPES, PartyType, type PermissionResource } from '@platform/shared';
import type { Knex } from '@platform/db';
import type { z } from 'zod';
import type { CollectionSpec } from '../http/collection';

/** A column of a resource row, as Postgres returns it. */
export type Row = Record<string, unknown> & { id: number };

/** A write field that references another resource by id; the id must be live and in scope. */
export interface Relation {
  /** The table of the referenced resource. */
  table: string;
  /** Its name in messages, e.g. 'Property'. */
  name: string;
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
  /** Party types that may read; default every type (each sees only its scope). */
  readers?: readonly PartyType[];
  /** Party types that may create, update and delete; default Admin and Property Management Company. */
  writers?: readonly PartyType[];
  /** False for resources the API never deletes (ProcessFeed, spec 6.4). */
  deletable?: boolean;
  /** Behind the caller's party conference feature flag. */
  conference?: boolean;
  /** Extra checks of a create or update, inside its transaction, before the row is written. */
  validate?(values: Record<string, unknown>, context: { trx: Knex.Transaction }): Promise<void>;
}

export const DEFAULT_READERS = ALL_PARTY_TYPES;
export const DEFAULT_WRITERS = [PartyType.Admin, PartyType.PropertyManagementCompany] as const;

/** Declares a resource (an identity function that keeps the declaration typed). */
export function defineResource(definition: ResourceDefinition): ResourceDefinition {
  return definition;
}
