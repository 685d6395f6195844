import {
  AccountContactDetailsRead,
  AccountRead,
  ALL_PARTY_TYPES,
  MAX_CONTACT_DETAILS_PER_ACCOUNT,
  MAX_CONTACT_DETAILS_PER_PARTY,
  type PermissionName,
} from '@platform/shared';
import type { Knex } from '@platform/db';
import type { z } from 'zod';
import type { Principal } from '../auth/principal';
import { ACCOUNT_COLUMNS, presentAccount, type AccountRow } from '../features/accounts/account-presenter';
import { ACCOUNT_COLLECTION, visibleAccountIds } from '../features/accounts/account-service';
import {
  presentContactDetail,
  type ContactDetailRow,
} from '../features/contact-details/contact-detail-presenter';
import {
  CONTACT_DETAIL_COLLECTION,
  visibleContactDetails,
} from '../features/contact-details/contact-detail-service';
import type { CollectionSpec } from '../http/collection';
import type { RouteAuth } from '../http/route';
import { RESOURCES } from '../resources/index';
import { DEFAULT_READERS, DEFAULT_WRITERS, type ResourceDefinition, type Row } from '../resources/resource';
import { visible } from '../resources/resource-service';

/**
 * Where a Gen1 view reads: the scoped live rows and the read shape of a Gen2 resource, never a
 * copy of its data nor scope rules of its own.
 */
export interface Gen1Source {
  /** The Gen2 entity behind the view (docs/gen1-to-gen2.md#what-each-gen1-view-becomes-in-gen2). */
  entity: string;
  /** The live rows the caller may see, as the Gen2 reads of the entity scope them. */
  rows(knex: Knex, principal: Principal): Knex.QueryBuilder;
  /** The id column; lists are ordered by it, so pages are stable. */
  idColumn: string;
  /** The Gen2 collection spec: the SQL column of each filterable read field. */
  collection: CollectionSpec;
  /** A row as its Gen2 read shape. */
  present(row: Row): Record<string, unknown>;
  /** The schema of that read shape, whose fields the Gen1 record schema (OpenAPI) takes. */
  read: z.ZodType;
  /** Who may read it: the guards of the Gen2 reads. */
  readers: RouteAuth;
  /**
   * The Gen2 resource whose write path (createResource, updateResource, deleteResource) the Gen1
   * writes of the view go through: a view with one takes POST, PUT, PATCH and (when the resource
   * is deletable) DELETE; one without is read-only.
   */
  definition?: ResourceDefinition;
}

/** One Gen1 view (docs/gen1-to-gen2.md#what-each-gen1-view-becomes-in-gen2): a Gen2 read shape under Gen1 names. */
export interface Gen1View {
  /** The Gen1 name, which is also its path (`companies` → `/companies`). */
  name: string;
  /** One record, in messages ("company 7 was not found"). */
  noun: string;
  source: Gen1Source;
  /** Gen1 field → Gen2 read field, in the order of the Gen1 shape (snake_case of Gen1 names). */
  fields: Readonly<Record<string, string>>;
  /** Query parameters that filter the list: Gen1 fields (of `fields`) holding ids. */
  filters?: readonly string[];
  /**
   * The filter under which the list is bounded by a Gen2 rule (at most `max` records) and so is
   * answered whole, not paginated.
   */
  whole?: { filter: string; max: number };
  /** What the view embeds, with the Gen2 read permissions that embedding needs. */
  embeds?: { list: boolean; permissions: readonly PermissionName[] };
}

function resource(name: string): ResourceDefinition {
  const def = RESOURCES.find((candidate) => candidate.name === name);
  if (!def) throw new Error(`no Gen2 resource ${name}`);
  return def;
}

/** The read schema of the Gen2 resource `name`. */
export const resourceRead = (name: string): z.ZodType => resource(name).read;

/** A view source on a registry resource: its scoped reads, its guards, its write path. */
function registrySource(name: string): Gen1Source {
  const def = resource(name);
  return {
    entity: def.name,
    rows: (knex, principal) => visible(knex, principal, def),
    idColumn: `${def.table}.id`,
    collection: def.collection,
    present: (row) => def.present(row) as Record<string, unknown>,
    read: def.read,
    readers: { allow: def.readers ?? DEFAULT_READERS, permission: `${def.permission}.Read` },
    definition: def,
  };
}

/** The Gen2 write operations a Gen1 view maps its verbs onto. */
export type Gen1WriteOperation = 'Create' | 'Update' | 'Delete';

/** Who may write a registry view: the guards of the Gen2 create, update or delete. */
export function writers(def: ResourceDefinition, operation: Gen1WriteOperation): RouteAuth {
  return { allow: def.writers ?? DEFAULT_WRITERS, permission: `${def.permission}.${operation}` };
}

/** Accounts (Gen1 users), scoped as GET /api/accounts: a User itself, others by party scope. */
const accountSource: Gen1Source = {
  entity: 'Account',
  rows: (knex, principal) =>
    knex('accounts as a')
      .select(ACCOUNT_COLUMNS)
      .whereNull('a.deleted')
      .whereIn('a.id', visibleAccountIds(knex, principal)),
  idColumn: 'a.id',
  collection: ACCOUNT_COLLECTION,
  present: (row) => presentAccount(row as unknown as AccountRow),
  read: AccountRead,
  readers: { allow: ALL_PARTY_TYPES },
};

/** Account contact details (Gen1 usercontact), visible exactly when their account is. */
const accountContactSource: Gen1Source = {
  entity: 'AccountContactDetails',
  rows: (knex, principal) => visibleContactDetails(knex, principal),
  idColumn: 'cd.id',
  collection: CONTACT_DETAIL_COLLECTION,
  present: (row) => presentContactDetail(row as unknown as ContactDetailRow),
  read: AccountContactDetailsRead,
  readers: { allow: ALL_PARTY_TYPES },
};

const timestamps = { created: 'created', last_modified: 'lastModified' } as const;

export const companiesView: Gen1View = {
  name: 'companies',
  noun: 'company',
  source: registrySource('Party'),
  fields: {
    id: 'id',
    company_type: 'type',
    name: 'name',
    managed_by_company_id: 'managedByPartyId',
    conference_enabled: 'conferenceEnabled',
    ...timestamps,
  },
  filters: ['company_type', 'managed_by_company_id'],
};

export const companyContactView: Gen1View = {
  name: 'companycontact',
  noun: 'company contact',
  source: registrySource('ContactDetails'),
  fields: {
    id: 'id',
    company_id: 'partyId',
    type: 'type',
    value: 'value',
    label: 'label',
    is_primary: 'isPrimary',
    ...timestamps,
  },
  filters: ['company_id'],
  whole: { filter: 'company_id', max: MAX_CONTACT_DETAILS_PER_PARTY },
};

export const usersView: Gen1View = {
  name: 'users',
  noun: 'user',
  source: accountSource,
  fields: {
    id: 'id',
    company_id: 'partyId',
    group_id: 'groupId',
    email: 'email',
    first_name: 'firstName',
    last_name: 'lastName',
    must_change_password: 'mustChangePassword',
    mfa_enabled: 'multiFactorEnabled',
    ...timestamps,
  },
  filters: ['company_id', 'group_id'],
};

export const userContactView: Gen1View = {
  name: 'usercontact',
  noun: 'user contact',
  source: accountContactSource,
  fields: {
    id: 'id',
    user_id: 'accountId',
    type: 'type',
    value: 'value',
    label: 'label',
    is_primary: 'isPrimary',
    ...timestamps,
  },
  filters: ['user_id'],
  whole: { filter: 'user_id', max: MAX_CONTACT_DETAILS_PER_ACCOUNT },
};

/** An entrance as an object embeds it (Gen1 had no entrance view: an object was both). */
export const entranceFields: Readonly<Record<string, string>> = {
  id: 'id',
  name: 'name',
  street: 'street',
  house_number: 'houseNumber',
  postal_code: 'postalCode',
  city: 'city',
  notes: 'notes',
  ...timestamps,
};

export const flatsView: Gen1View = {
  name: 'flats',
  noun: 'flat',
  source: registrySource('Unit'),
  fields: {
    id: 'id',
    company_id: 'partyId',
    object_id: 'propertyId',
    entrance_id: 'entranceId',
    number: 'number',
    floor: 'floor',
    flat_type: 'unitType',
    living_area: 'livingArea',
    rooms: 'rooms',
    notes: 'notes',
    ...timestamps,
  },
  filters: ['company_id', 'object_id', 'entrance_id'],
};

export const objectsView: Gen1View = {
  name: 'objects',
  noun: 'object',
  source: registrySource('Property'),
  fields: {
    id: 'id',
    company_id: 'partyId',
    name: 'name',
    street: 'street',
    house_number: 'houseNumber',
    postal_code: 'postalCode',
    city: 'city',
    country: 'country',
    object_type: 'propertyType',
    year_built: 'yearBuilt',
    notes: 'notes',
    ...timestamps,
  },
  filters: ['company_id'],
  // an object is its building with its entrances and flats, in lists too
  embeds: { list: true, permissions: ['Entrance.Read', 'Unit.Read'] },
};

export const flatCompanyView: Gen1View = {
  name: 'flatcompany',
  noun: 'flat company',
  source: registrySource('UnitContract'),
  fields: {
    id: 'id',
    company_id: 'partyId',
    flat_id: 'unitId',
    contract_company_id: 'contractPartyId',
    contract_type: 'contractType',
    start_date: 'startDate',
    end_date: 'endDate',
    monthly_rent: 'monthlyRent',
    currency: 'currency',
    notes: 'notes',
    ...timestamps,
  },
  filters: ['company_id', 'flat_id', 'contract_company_id'],
};

export const orderTimelineView: Gen1View = {
  name: 'ordertimeline',
  noun: 'order timeline entry',
  source: registrySource('ProcessFeed'),
  fields: {
    id: 'id',
    company_id: 'partyId',
    order_id: 'processId',
    kind: 'kind',
    text: 'text',
    author_user_id: 'authorAccountId',
    ...timestamps,
  },
  filters: ['order_id'],
};

export const ordersView: Gen1View = {
  name: 'orders',
  noun: 'order',
  source: registrySource('Process'),
  fields: {
    id: 'id',
    company_id: 'partyId',
    title: 'title',
    description: 'description',
    status: 'status',
    priority: 'priority',
    object_id: 'propertyId',
    flat_id: 'unitId',
    assignee_user_id: 'assigneeAccountId',
    due_date: 'dueDate',
    completed_at: 'completedAt',
    ...timestamps,
  },
  filters: ['company_id', 'object_id', 'flat_id', 'assignee_user_id'],
  // the timeline comes with the single read only: a list of orders stays one query per page
  embeds: { list: false, permissions: ['ProcessFeed.Read'] },
};

export const orderContractorView: Gen1View = {
  name: 'ordercontractor',
  noun: 'order contractor',
  source: registrySource('WorkOrder'),
  fields: {
    id: 'id',
    company_id: 'partyId',
    order_id: 'processId',
    contractor_company_id: 'contractorPartyId',
    object_id: 'propertyId',
    flat_id: 'unitId',
    title: 'title',
    description: 'description',
    status: 'status',
    scheduled_for: 'scheduledFor',
    completed_at: 'completedAt',
    cost: 'cost',
    currency: 'currency',
    ...timestamps,
  },
  filters: ['company_id', 'order_id', 'contractor_company_id'],
};

export const inboxView: Gen1View = {
  name: 'inbox',
  noun: 'inbox message',
  source: registrySource('Inquiry'),
  fields: {
    id: 'id',
    receiver_company_id: 'receiverPartyId',
    source_id: 'sourceId',
    category_id: 'categoryId',
    connected_company_id: 'connectedPartyId',
    creator_user_id: 'creatorAccountId',
    creator_company_type: 'creatorAccountRole',
    read_status: 'readStatus',
    read_by_user_id: 'readByAccountId',
    subject: 'subject',
    report: 'report',
    rejection_response: 'rejectionResponse',
    completion_response: 'completionResponse',
    object_id: 'connectedPropertyId',
    flat_id: 'connectedUnitId',
    order_id: 'associatedProcessId',
    order_timeline_entry_id: 'associatedProcessFeedEntryId',
    todo_id: 'associatedTodoId',
    priority: 'priority',
    due_date: 'dueDate',
    ...timestamps,
  },
  filters: ['receiver_company_id', 'connected_company_id', 'object_id', 'order_id'],
};

export const companyNewsView: Gen1View = {
  name: 'companynews',
  noun: 'company news item',
  source: registrySource('Notice'),
  fields: {
    id: 'id',
    company_id: 'partyId',
    title: 'title',
    body: 'body',
    object_id: 'propertyId',
    audience: 'audience',
    published_at: 'publishedAt',
    expires_at: 'expiresAt',
    ...timestamps,
  },
  filters: ['company_id', 'object_id'],
};

/** Every Gen1 view backed by Gen2 data (`/todo` has none: see gen1-routes.ts). */
export const GEN1_VIEWS: readonly Gen1View[] = [
  companiesView,
  companyContactView,
  usersView,
  userContactView,
  objectsView,
  flatsView,
  flatCompanyView,
  ordersView,
  orderTimelineView,
  orderContractorView,
  inboxView,
  companyNewsView,
];
