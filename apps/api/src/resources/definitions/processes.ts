import {
  InquiryRead,
  InquiryReadStatus,
  InquiryWrite,
  NoticeRead,
  NoticeWrite,
  PartyType,
  ProcessFeedRead,
  ProcessFeedWrite,
  ProcessRead,
  ProcessWrite,
  WorkOrderRead,
  WorkOrderWrite,
} from '@platform/shared';
import type { Knex } from '@platform/db';
import { fieldError } from '../../http/errors';
import { decimal, withMeta, iso, isoDate } from '../present';
import { defineResource, type ResourceDefinition, type Row, writeColumns, tableFields } from '../resource';

const isSet = (value: unknown) => value !== null && value !== undefined;

/**
 * A 400 naming `field` when the row `childId` of `table` does not belong to the parent row
 * `parentId` through `parentColumn` (a unit of another property, a feed entry of another process).
 * Checked on the merged row, so a patch of either side alone is held to the other's stored value.
 */
async function assertBelongsTo(
  trx: Knex.Transaction,
  check: { table: string; childId: unknown; parentColumn: string; parentId: unknown },
  field: string,
  message: string,
): Promise<void> {
  if (!isSet(check.childId) || !isSet(check.parentId)) return;
  const child = await trx(check.table).where({ id: check.childId }).first(check.parentColumn);
  if (child && child[check.parentColumn] !== check.parentId) throw fieldError(field, message);
}

/** A unit named together with a property must be one of its units. */
function assertUnitInProperty(
  trx: Knex.Transaction,
  unitId: unknown,
  propertyId: unknown,
  field: string,
): Promise<void> {
  return assertBelongsTo(
    trx,
    { table: 'units', childId: unitId, parentColumn: 'property_id', parentId: propertyId },
    field,
    `Unit ${String(unitId)} is not a unit of property ${String(propertyId)}`,
  );
}

/**
 * The service keeps `completed_at` (never written by a client): set when the status becomes
 * `completed`, kept while it stays so, cleared when it leaves it.
 */
function completion(values: Record<string, unknown>, current: Row | undefined, now: Date) {
  if (values.status === undefined) return {};
  if (values.status !== 'completed') return { completed_at: null };
  return current?.status === 'completed' ? {} : { completed_at: now };
}

/** Process: a case a property manager handles, such as a repair or a complaint (Gen1 "orders"). */
export const processResource = defineResource({
  name: 'Process',
  path: '/api/processes',
  table: 'processes',
  permission: 'Process',
  read: ProcessRead,
  write: ProcessWrite,
  columns: writeColumns(ProcessWrite),
  relations: {
    propertyId: { table: 'properties', name: 'Property' },
    unitId: { table: 'units', name: 'Unit' },
    assigneeAccountId: { table: 'accounts', name: 'Account' },
  },
  collection: {
    fields: tableFields('processes', {
      id: 'integer',
      partyId: 'integer',
      title: 'string',
      status: 'string',
      priority: 'integer',
      propertyId: 'integer',
      unitId: 'integer',
      assigneeAccountId: 'integer',
      dueDate: 'date',
      completedAt: 'timestamp',
      created: 'timestamp',
      lastModified: 'timestamp',
    }),
    sortable: ['id', 'title', 'status', 'priority', 'dueDate', 'completedAt', 'created', 'lastModified'],
    tieBreaker: 'processes.id',
  },
  present: (row) =>
    withMeta(row, {
      partyId: row.party_id as number,
      title: row.title as string,
      description: row.description as string | null,
      status: row.status as ProcessRead['status'],
      priority: row.priority as number,
      propertyId: row.property_id as number | null,
      unitId: row.unit_id as number | null,
      assigneeAccountId: row.assignee_account_id as number | null,
      dueDate: isoDate(row.due_date),
      completedAt: iso(row.completed_at),
    }),
  derive: (values, { current, now }) => completion(values, current, now),
  async validate(values, { trx }) {
    await assertUnitInProperty(trx, values.unit_id, values.property_id, 'unitId');
  },
});

/**
 * ProcessFeed: one entry of a process's timeline (Gen1 "ordertimeline"). An entry belongs to the
 * party of its process, so whoever sees the process sees its timeline; its author is the caller.
 * The API never deletes one (docs/resources.md#processes).
 */
export const processFeedResource = defineResource({
  name: 'ProcessFeed',
  path: '/api/process-feed',
  table: 'process_feed',
  permission: 'ProcessFeed',
  read: ProcessFeedRead,
  write: ProcessFeedWrite,
  columns: { processId: 'process_id', kind: 'kind', text: 'text' },
  relations: { processId: { table: 'processes', name: 'Process' } },
  createOnly: ['processId'],
  deletable: false,
  // the relation check that follows refuses a process outside the caller's scope, so its party
  // is only ever used for one the caller may see
  async owner(body, { trx, principal }) {
    const process = await trx('processes')
      .where({ id: body.processId })
      .whereNull('deleted')
      .first('party_id');
    return { party_id: (process?.party_id as number | undefined) ?? principal.partyId };
  },
  derive: (_values, { current, principal }) => (current ? {} : { author_account_id: principal.accountId }),
  collection: {
    fields: tableFields('process_feed', {
      id: 'integer',
      partyId: 'integer',
      processId: 'integer',
      kind: 'string',
      text: 'string',
      authorAccountId: 'integer',
      created: 'timestamp',
      lastModified: 'timestamp',
    }),
    sortable: ['id', 'processId', 'kind', 'created', 'lastModified'],
    tieBreaker: 'process_feed.id',
  },
  present: (row) =>
    withMeta(row, {
      partyId: row.party_id as number,
      processId: row.process_id as number,
      kind: row.kind as ProcessFeedRead['kind'],
      text: row.text as string,
      authorAccountId: row.author_account_id as number | null,
    }),
});

/**
 * WorkOrder: a job given to a contractor (Gen1 "ordercontractor"). The contractor it is
 * addressed to may read it (not change it), though the row belongs to the ordering party.
 */
export const workOrderResource = defineResource({
  name: 'WorkOrder',
  path: '/api/work-orders',
  table: 'work_orders',
  permission: 'WorkOrder',
  read: WorkOrderRead,
  write: WorkOrderWrite,
  columns: writeColumns(WorkOrderWrite),
  relations: {
    processId: { table: 'processes', name: 'Process' },
    contractorPartyId: { table: 'parties', name: 'Contractor', partyColumn: 'id' },
    propertyId: { table: 'properties', name: 'Property' },
    unitId: { table: 'units', name: 'Unit' },
  },
  readableBy: ['contractor_party_id'],
  collection: {
    fields: tableFields('work_orders', {
      id: 'integer',
      partyId: 'integer',
      processId: 'integer',
      contractorPartyId: 'integer',
      propertyId: 'integer',
      unitId: 'integer',
      title: 'string',
      status: 'string',
      scheduledFor: 'timestamp',
      completedAt: 'timestamp',
      cost: 'number',
      currency: 'string',
      created: 'timestamp',
      lastModified: 'timestamp',
    }),
    sortable: [
      'id',
      'title',
      'status',
      'scheduledFor',
      'completedAt',
      'cost',
      'contractorPartyId',
      'created',
      'lastModified',
    ],
    tieBreaker: 'work_orders.id',
  },
  present: (row) =>
    withMeta(row, {
      partyId: row.party_id as number,
      processId: row.process_id as number | null,
      contractorPartyId: row.contractor_party_id as number,
      propertyId: row.property_id as number | null,
      unitId: row.unit_id as number | null,
      title: row.title as string,
      description: row.description as string | null,
      status: row.status as WorkOrderRead['status'],
      scheduledFor: iso(row.scheduled_for),
      completedAt: iso(row.completed_at),
      cost: decimal(row.cost),
      currency: row.currency as string,
    }),
  derive: (values, { current, now }) => completion(values, current, now),
  async validate(values, { trx }) {
    const contractor = await trx('parties').where({ id: values.contractor_party_id }).first('type');
    if (contractor && contractor.type !== PartyType.Contractor) {
      throw fieldError(
        'contractorPartyId',
        `Party ${String(values.contractor_party_id)} is not a contractor (party type 5)`,
      );
    }
    await assertUnitInProperty(trx, values.unit_id, values.property_id, 'unitId');
  },
});

/**
 * Inquiry: a message in a party's inbox (Gen1 "inbox"), exactly the shape of docs/resources.md#processes. It belongs
 * to its receiver; the creator fields come from the caller; `report` is stored as given.
 */
export const inquiryResource = defineResource({
  name: 'Inquiry',
  path: '/api/inquiries',
  table: 'inquiries',
  permission: 'Inquiry',
  read: InquiryRead,
  write: InquiryWrite,
  partyColumn: 'receiver_party_id',
  columns: writeColumns(InquiryWrite),
  relations: {
    receiverPartyId: { table: 'parties', name: 'Party', partyColumn: 'id' },
    connectedPartyId: { table: 'parties', name: 'Party', partyColumn: 'id' },
    connectedPropertyId: { table: 'properties', name: 'Property' },
    connectedUnitId: { table: 'units', name: 'Unit' },
    associatedProcessId: { table: 'processes', name: 'Process' },
    associatedProcessFeedEntryId: { table: 'process_feed', name: 'ProcessFeed entry' },
  },
  // an inquiry stays in the inbox it was sent to
  createOnly: ['receiverPartyId'],
  // the relation check refuses a receiver outside the caller's scope
  owner: async (body, { principal }) => ({
    receiver_party_id: (body.receiverPartyId as number | undefined) ?? principal.partyId,
  }),
  derive(values, { current, principal }) {
    const derived: Record<string, unknown> = current
      ? {}
      : { creator_account_id: principal.accountId, creator_account_role: principal.partyType };
    // who read it is the caller who marks it read, kept while it stays read
    if (values.read_status === InquiryReadStatus.Unread) derived.read_by_account_id = null;
    if (values.read_status === InquiryReadStatus.Read && current?.read_status !== InquiryReadStatus.Read) {
      derived.read_by_account_id = principal.accountId;
    }
    return derived;
  },
  async validate(values, { trx }) {
    await assertUnitInProperty(
      trx,
      values.connected_unit_id,
      values.connected_property_id,
      'connectedUnitId',
    );
    await assertBelongsTo(
      trx,
      {
        table: 'process_feed',
        childId: values.associated_process_feed_entry_id,
        parentColumn: 'process_id',
        parentId: values.associated_process_id,
      },
      'associatedProcessFeedEntryId',
      `ProcessFeed entry ${String(values.associated_process_feed_entry_id)} is not an entry of process ${String(values.associated_process_id)}`,
    );
    if (isSet(values.rejection_response) && isSet(values.completion_response)) {
      throw fieldError('completionResponse', 'an inquiry is either rejected or completed, not both');
    }
  },
  collection: {
    fields: tableFields('inquiries', {
      id: 'integer',
      receiverPartyId: 'integer',
      connectedPartyId: 'integer',
      creatorAccountId: 'integer',
      sourceId: 'integer',
      categoryId: 'integer',
      readStatus: 'integer',
      subject: 'string',
      priority: 'integer',
      connectedPropertyId: 'integer',
      connectedUnitId: 'integer',
      associatedProcessId: 'integer',
      dueDate: 'date',
      created: 'timestamp',
      lastModified: 'timestamp',
    }),
    sortable: ['id', 'subject', 'readStatus', 'priority', 'categoryId', 'dueDate', 'created', 'lastModified'],
    tieBreaker: 'inquiries.id',
  },
  // exactly the keys of docs/resources.md#processes, in their order
  present: (row) => ({
    sourceId: row.source_id as number,
    categoryId: row.category_id as number,
    connectedPartyId: row.connected_party_id as number,
    creatorAccountId: row.creator_account_id as number,
    creatorAccountRole: row.creator_account_role as number,
    receiverPartyId: row.receiver_party_id as number,
    readStatus: row.read_status as number,
    id: row.id,
    report: row.report as string,
    subject: row.subject as string | null,
    rejectionResponse: row.rejection_response as string | null,
    completionResponse: row.completion_response as string | null,
    connectedPropertyId: row.connected_property_id as number | null,
    connectedUnitId: row.connected_unit_id as number | null,
    associatedProcessId: row.associated_process_id as number | null,
    associatedProcessFeedEntryId: row.associated_process_feed_entry_id as number | null,
    associatedTodoId: row.associated_todo_id as number | null,
    priority: row.priority as number | null,
    readByAccountId: row.read_by_account_id as number | null,
    dueDate: isoDate(row.due_date),
    created: iso(row.created)!,
    lastModified: iso(row.last_modified),
    deleted: iso(row.deleted),
  }),
});

/** Notice: news a property manager publishes (Gen1 "companynews"), for all or one property. */
export const noticeResource = defineResource({
  name: 'Notice',
  path: '/api/notices',
  table: 'notices',
  permission: 'Notice',
  read: NoticeRead,
  write: NoticeWrite,
  columns: writeColumns(NoticeWrite),
  relations: { propertyId: { table: 'properties', name: 'Property' } },
  async validate(values) {
    // on the merged row: a patch of either bound alone is held to the other's stored value
    const published = values.published_at ? new Date(values.published_at as string | Date) : null;
    const expires = values.expires_at ? new Date(values.expires_at as string | Date) : null;
    if (published && expires && expires.getTime() < published.getTime()) {
      throw fieldError('expiresAt', `must not be before publishedAt (${published.toISOString()})`);
    }
  },
  collection: {
    fields: tableFields('notices', {
      id: 'integer',
      partyId: 'integer',
      title: 'string',
      propertyId: 'integer',
      audience: 'string',
      publishedAt: 'timestamp',
      expiresAt: 'timestamp',
      created: 'timestamp',
      lastModified: 'timestamp',
    }),
    sortable: ['id', 'title', 'audience', 'publishedAt', 'expiresAt', 'created', 'lastModified'],
    tieBreaker: 'notices.id',
  },
  present: (row) =>
    withMeta(row, {
      partyId: row.party_id as number,
      title: row.title as string,
      body: row.body as string,
      propertyId: row.property_id as number | null,
      publishedAt: iso(row.published_at),
      expiresAt: iso(row.expires_at),
      audience: row.audience as NoticeRead['audience'],
    }),
});

export const processResources: ResourceDefinition[] = [
  processResource,
  processFeedResource,
  workOrderResource,
  inquiryResource,
  noticeResource,
];
