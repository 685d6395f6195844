import { z } from 'zod';
import { EntityMeta, Id, OptionalText, Text, Timestamp } from './common';
import { CalendarDate, CurrencyCode } from './real-estate';

/** Priority of a process or an inquiry: 1 low, 2 normal, 3 high, 4 urgent. */
export const ProcessPriority = { Low: 1, Normal: 2, High: 3, Urgent: 4 } as const;
export type ProcessPriority = (typeof ProcessPriority)[keyof typeof ProcessPriority];

/** One of a numeric code list, its names in the message and the OpenAPI enum. */
function code<T extends Record<string, number>>(list: T) {
  const values = Object.values(list);
  const names = Object.entries(list)
    .map(([name, value]) => `${value} ${name}`)
    .join(', ');
  return z
    .number()
    .int()
    .refine((value) => values.includes(value), `must be one of ${names}`)
    .meta({ type: 'integer', enum: values, description: names });
}

const PriorityValue = code(ProcessPriority);

// ---------------------------------------------------------------------------------------------
// Process (Gen1 "orders")

export const PROCESS_STATUSES = ['open', 'in_progress', 'on_hold', 'completed', 'cancelled'] as const;
export type ProcessStatus = (typeof PROCESS_STATUSES)[number];

export const ProcessRead = z
  .object({
    ...EntityMeta,
    partyId: z.number().int(),
    title: z.string(),
    description: z.string().nullable(),
    status: z.enum(PROCESS_STATUSES),
    priority: z.number().int().meta({ description: '1 low, 2 normal, 3 high, 4 urgent' }),
    propertyId: z.number().int().nullable(),
    unitId: z.number().int().nullable(),
    assigneeAccountId: z.number().int().nullable(),
    dueDate: CalendarDate.nullable(),
    completedAt: Timestamp.nullable().meta({
      description: 'Set by the service when the status becomes completed; cleared when it leaves it.',
    }),
  })
  .meta({ id: 'ProcessRead' });
export type ProcessRead = z.infer<typeof ProcessRead>;

export const ProcessWrite = z
  .strictObject({
    partyId: Id.optional().meta({ description: 'Owning party; the caller’s own party when absent.' }),
    title: Text(200),
    description: OptionalText(10000),
    status: z.enum(PROCESS_STATUSES).optional(),
    priority: PriorityValue.optional(),
    propertyId: Id.nullable().optional(),
    unitId: Id.nullable().optional().meta({ description: 'Must belong to `propertyId` when both are set.' }),
    assigneeAccountId: Id.nullable()
      .optional()
      .meta({ description: 'An account of a party in the caller’s scope.' }),
    dueDate: CalendarDate.nullable().optional(),
  })
  .meta({ id: 'ProcessWrite' });
export type ProcessWrite = z.infer<typeof ProcessWrite>;

// ---------------------------------------------------------------------------------------------
// ProcessFeed (Gen1 "ordertimeline")

export const PROCESS_FEED_KINDS = ['comment', 'status_change', 'attachment', 'message'] as const;
export type ProcessFeedKind = (typeof PROCESS_FEED_KINDS)[number];

export const ProcessFeedRead = z
  .object({
    ...EntityMeta,
    partyId: z.number().int().meta({ description: 'The party of its process.' }),
    processId: z.number().int(),
    kind: z.enum(PROCESS_FEED_KINDS),
    text: z.string(),
    authorAccountId: z.number().int().nullable(),
  })
  .meta({ id: 'ProcessFeedRead' });
export type ProcessFeedRead = z.infer<typeof ProcessFeedRead>;

export const ProcessFeedWrite = z
  .strictObject({
    processId: Id.meta({ description: 'Fixed at creation.' }),
    kind: z.enum(PROCESS_FEED_KINDS).optional(),
    text: Text(10000),
  })
  .meta({ id: 'ProcessFeedWrite' });
export type ProcessFeedWrite = z.infer<typeof ProcessFeedWrite>;

// ---------------------------------------------------------------------------------------------
// WorkOrder (Gen1 "ordercontractor")

export const WORK_ORDER_STATUSES = [
  'requested',
  'accepted',
  'scheduled',
  'in_progress',
  'completed',
  'cancelled',
] as const;
export type WorkOrderStatus = (typeof WORK_ORDER_STATUSES)[number];

export const WorkOrderRead = z
  .object({
    ...EntityMeta,
    partyId: z.number().int(),
    processId: z.number().int().nullable(),
    contractorPartyId: z.number().int(),
    propertyId: z.number().int().nullable(),
    unitId: z.number().int().nullable(),
    title: z.string(),
    description: z.string().nullable(),
    status: z.enum(WORK_ORDER_STATUSES),
    scheduledFor: Timestamp.nullable(),
    completedAt: Timestamp.nullable().meta({
      description: 'Set by the service when the status becomes completed; cleared when it leaves it.',
    }),
    cost: z.number().nullable(),
    currency: z.string().meta({ description: 'ISO 4217' }),
  })
  .meta({ id: 'WorkOrderRead' });
export type WorkOrderRead = z.infer<typeof WorkOrderRead>;

export const WorkOrderWrite = z
  .strictObject({
    partyId: Id.optional().meta({ description: 'Owning party; the caller’s own party when absent.' }),
    processId: Id.nullable().optional(),
    contractorPartyId: Id.meta({ description: 'A Contractor (party type 5) in the caller’s scope.' }),
    propertyId: Id.nullable().optional(),
    unitId: Id.nullable().optional().meta({ description: 'Must belong to `propertyId` when both are set.' }),
    title: Text(200),
    description: OptionalText(10000),
    status: z.enum(WORK_ORDER_STATUSES).optional(),
    scheduledFor: Timestamp.nullable().optional(),
    cost: z
      .number()
      .min(0)
      .max(9999999999.99)
      .refine((value) => Math.abs(Math.round(value * 100) - value * 100) < 1e-6, 'at most 2 decimals')
      .nullable()
      .optional(),
    currency: CurrencyCode.optional(),
  })
  .meta({ id: 'WorkOrderWrite' });
export type WorkOrderWrite = z.infer<typeof WorkOrderWrite>;

// ---------------------------------------------------------------------------------------------
// Inquiry (Gen1 "inbox"): exactly the fields of docs/resources.md#processes

/** Where an inquiry came in. */
export const InquirySource = { Api: 1, App: 2, Email: 3, Phone: 4, Letter: 5, InPerson: 6 } as const;
export type InquirySource = (typeof InquirySource)[keyof typeof InquirySource];

/** What an inquiry is about. */
export const InquiryCategory = {
  General: 1,
  DamageReport: 2,
  Complaint: 3,
  Contract: 4,
  Payment: 5,
  Moving: 6,
  Other: 7,
} as const;
export type InquiryCategory = (typeof InquiryCategory)[keyof typeof InquiryCategory];

export const InquiryReadStatus = { Unread: 0, Read: 1 } as const;
export type InquiryReadStatus = (typeof InquiryReadStatus)[keyof typeof InquiryReadStatus];

export const InquiryRead = z
  .object({
    id: z.number().int(),
    sourceId: z.number().int(),
    categoryId: z.number().int(),
    connectedPartyId: z.number().int(),
    creatorAccountId: z.number().int(),
    creatorAccountRole: z.number().int().meta({ description: 'Party type of the creator' }),
    receiverPartyId: z.number().int().meta({ description: 'The owning party' }),
    readStatus: z.number().int().meta({ description: '0 unread, 1 read' }),
    report: z
      .string()
      .meta({ description: 'HTML as the client sent it: untrusted, sanitize before rendering' }),
    subject: z.string().nullable(),
    rejectionResponse: z.string().nullable(),
    completionResponse: z.string().nullable(),
    connectedPropertyId: z.number().int().nullable(),
    connectedUnitId: z.number().int().nullable(),
    associatedProcessId: z.number().int().nullable(),
    associatedProcessFeedEntryId: z.number().int().nullable(),
    associatedTodoId: z.number().int().nullable(),
    priority: z.number().int().nullable(),
    readByAccountId: z.number().int().nullable(),
    dueDate: CalendarDate.nullable(),
    created: EntityMeta.created,
    lastModified: EntityMeta.lastModified,
    deleted: EntityMeta.deleted,
  })
  .meta({ id: 'InquiryRead' });
export type InquiryRead = z.infer<typeof InquiryRead>;

export const InquiryWrite = z
  .strictObject({
    receiverPartyId: Id.optional().meta({
      description: 'Owning party, whose inbox holds it; the caller’s own party when absent.',
    }),
    sourceId: code(InquirySource).optional(),
    categoryId: code(InquiryCategory).optional(),
    connectedPartyId: Id.meta({ description: 'The party the inquiry comes from or is about.' }),
    readStatus: code(InquiryReadStatus).optional(),
    report: z
      .string()
      .min(1)
      .max(100000)
      .meta({ description: 'HTML, stored as given (not sanitized): render it as untrusted.' }),
    subject: OptionalText(200),
    rejectionResponse: OptionalText(10000),
    completionResponse: OptionalText(10000),
    connectedPropertyId: Id.nullable().optional(),
    connectedUnitId: Id.nullable()
      .optional()
      .meta({ description: 'Must belong to `connectedPropertyId` when both are set.' }),
    associatedProcessId: Id.nullable().optional(),
    associatedProcessFeedEntryId: Id.nullable()
      .optional()
      .meta({ description: 'Must belong to `associatedProcessId` when both are set.' }),
    associatedTodoId: Id.nullable().optional(),
    priority: PriorityValue.nullable().optional(),
    dueDate: CalendarDate.nullable().optional(),
  })
  .meta({ id: 'InquiryWrite' });
export type InquiryWrite = z.infer<typeof InquiryWrite>;

// ---------------------------------------------------------------------------------------------
// Notice (Gen1 "companynews")

export const NOTICE_AUDIENCES = ['all', 'owners', 'tenants'] as const;
export type NoticeAudience = (typeof NOTICE_AUDIENCES)[number];

export const NoticeRead = z
  .object({
    ...EntityMeta,
    partyId: z.number().int(),
    title: z.string(),
    body: z.string(),
    propertyId: z.number().int().nullable(),
    publishedAt: Timestamp.nullable(),
    expiresAt: Timestamp.nullable(),
    audience: z.enum(NOTICE_AUDIENCES),
  })
  .meta({ id: 'NoticeRead' });
export type NoticeRead = z.infer<typeof NoticeRead>;

export const NoticeWrite = z
  .strictObject({
    partyId: Id.optional().meta({ description: 'Owning party; the caller’s own party when absent.' }),
    title: Text(200),
    body: Text(20000),
    propertyId: Id.nullable()
      .optional()
      .meta({ description: 'Absent or null: a notice for every property.' }),
    publishedAt: Timestamp.nullable().optional(),
    expiresAt: Timestamp.nullable().optional().meta({ description: 'Not before `publishedAt`.' }),
    audience: z.enum(NOTICE_AUDIENCES).optional(),
  })
  .meta({ id: 'NoticeWrite' });
export type NoticeWrite = z.infer<typeof NoticeWrite>;
