import { z } from 'zod';
import { WebhookState } from './enums';
import { Page } from './pagination';
import { OPERATOR_ACTION_NAMES } from './operator-actions';
import { SubscribableEventType, WebhookEntityNameIn } from './webhooks';

/**
 * The contract of operator recovery (docs/operator-recovery.md): bulk actions by filter, recover, replay, test
 * events, secret rotation, the audit trail and triage. Bulk actions, recover and replay run as
 * operations: batched, resumable after a restart, polled at `GET /api/webhook-operations/{id}`.
 */

const timestamp = z.iso.datetime({ offset: true });
const timestampIn = (name: string) =>
  z
    .string({ error: `${name} must be an ISO 8601 timestamp with a zone, e.g. 2026-11-26T10:00:00Z` })
    .refine(
      (text) => z.iso.datetime({ offset: true }).safeParse(text).success,
      `${name} must be an ISO 8601 timestamp with a zone, e.g. 2026-11-26T10:00:00Z`,
    )
    .meta({ type: 'string', format: 'date-time' });
const int32Id = z.number().int().min(1).max(2147483647);
const webhookState = z
  .number()
  .int()
  .min(WebhookState.Created, 'a state is 1 Created … 7 Resolved')
  .max(WebhookState.Resolved, 'a state is 1 Created … 7 Resolved');

/** What a bulk action does to each webhook it selects; the rules of the single-webhook actions. */
export const BULK_WEBHOOK_ACTIONS = ['retry', 'abort', 'resolve'] as const;
export type BulkWebhookAction = (typeof BULK_WEBHOOK_ACTIONS)[number];

/** Every kind of operation: a bulk action, a recover (retry with a fresh schedule) or a replay. */
export const WEBHOOK_OPERATION_ACTIONS = [...BULK_WEBHOOK_ACTIONS, 'recover', 'replay'] as const;
export type WebhookOperationAction = (typeof WEBHOOK_OPERATION_ACTIONS)[number];

export const WEBHOOK_OPERATION_STATES = ['running', 'done', 'failed'] as const;
export type WebhookOperationState = (typeof WEBHOOK_OPERATION_STATES)[number];

/**
 * Why a selected webhook was left unchanged (the keys of an operation's `skipped`):
 * - `final`: it is Successful, Aborted or Resolved (abort, resolve) and nothing changes it again.
 * - `not-failed`: a retry or recover found it in another state than Failed (e.g. delivered since).
 * - `registration-deleted`: its registration was deleted, so it cannot be retried.
 * - `not-subscribed`: a replay found a change the registration would not have received.
 * - `pruned`: a replay's change was deleted by retention after the replay selected it.
 */
export const OPERATION_SKIP_REASONS = [
  'final',
  'not-failed',
  'registration-deleted',
  'not-subscribed',
  'pruned',
] as const;
export type OperationSkipReason = (typeof OPERATION_SKIP_REASONS)[number];

/** Which webhooks a bulk action selects: all given fields must match (absent ones match all). */
export const WebhookBulkFilter = z
  .strictObject({
    registrationId: int32Id.optional(),
    states: z.array(webhookState).min(1, 'states must name at least one state').max(7).optional(),
    entityName: WebhookEntityNameIn.optional(),
    entityId: int32Id.optional(),
    groupKey: z.string().min(1).max(300).optional(),
    errorKind: z
      .string()
      .min(1)
      .max(64)
      .nullable()
      .optional()
      .meta({
        description:
          'The error kind of the webhook’s last attempt (`status` for a non-2xx answer); null: it has ' +
          'no attempt (or none with an error), as on a triage line whose attempts were pruned.',
      }),
    statusCode: z.number().int().min(100).max(599).nullable().optional().meta({
      description:
        'The status code of the webhook’s last attempt; null: it has none (no answer, or no attempt).',
    }),
    createdFrom: timestampIn('createdFrom').optional().meta({ description: 'Created at or after.' }),
    createdBefore: timestampIn('createdBefore').optional().meta({ description: 'Created before.' }),
  })
  .superRefine((filter, ctx) => {
    if (
      filter.createdFrom &&
      filter.createdBefore &&
      Date.parse(filter.createdFrom) >= Date.parse(filter.createdBefore)
    ) {
      ctx.addIssue({
        code: 'custom',
        path: ['createdBefore'],
        message: 'createdBefore must be after createdFrom',
      });
    }
  })
  .meta({ id: 'WebhookBulkFilter' });
export type WebhookBulkFilter = z.infer<typeof WebhookBulkFilter>;

/** `POST /api/webhooks/bulk`. */
/** `fromDryRun` of a bulk action, recover or replay: the real run takes its dry run's selection. */
const FromDryRun = z
  .number()
  .int()
  .positive()
  .optional()
  .meta({
    description:
      'The id of a finished dry run of the same request: act on exactly the rows it selected (what the ' +
      'operator confirmed), not on what the filter matches now. Rows whose state moved on meanwhile are ' +
      'skipped. A dry run lends its selection once, within an hour.',
  });

/** A dry run cannot itself take another dry run's selection. */
function refuseDryRunFromDryRun(body: { fromDryRun?: number; dryRun?: boolean }, ctx: z.RefinementCtx): void {
  if (body.fromDryRun !== undefined && body.dryRun) {
    ctx.addIssue({
      code: 'custom',
      path: ['fromDryRun'],
      message: 'fromDryRun is for the real run, not a dry run',
    });
  }
}

export const WebhookBulkRequest = z
  .strictObject({
    action: z.enum(BULK_WEBHOOK_ACTIONS, { error: 'action must be one of retry, abort, resolve' }),
    filter: WebhookBulkFilter,
    dryRun: z.boolean().optional().meta({ description: 'Count what would change; change nothing.' }),
    fromDryRun: FromDryRun,
    freshSchedule: z
      .boolean()
      .optional()
      .meta({ description: 'retry only: start the 7-attempt schedule again instead of one more attempt.' }),
  })
  .superRefine((request, ctx) => {
    refuseDryRunFromDryRun(request, ctx);
    if (request.freshSchedule && request.action !== 'retry') {
      ctx.addIssue({
        code: 'custom',
        path: ['freshSchedule'],
        message: 'freshSchedule applies to retry only',
      });
    }
  })
  .meta({ id: 'WebhookBulkRequest' });
export type WebhookBulkRequest = z.infer<typeof WebhookBulkRequest>;

/** The window of a recover or a replay: webhooks (recover) or entity changes (replay) created in it. */
export const WebhookWindowRequest = z
  .strictObject({
    since: timestampIn('since'),
    until: timestampIn('until').optional().meta({ description: 'Exclusive; now when absent.' }),
    dryRun: z.boolean().optional().meta({ description: 'Count what would change; change nothing.' }),
    fromDryRun: FromDryRun,
  })
  .superRefine((window, ctx) => {
    refuseDryRunFromDryRun(window, ctx);
    if (window.until && Date.parse(window.since) >= Date.parse(window.until)) {
      ctx.addIssue({ code: 'custom', path: ['until'], message: 'until must be after since' });
    }
  })
  .meta({ id: 'WebhookWindowRequest' });
export type WebhookWindowRequest = z.infer<typeof WebhookWindowRequest>;

/** An operation: what it does, how far it got. */
export const WebhookOperationRead = z
  .object({
    id: z.number().int(),
    action: z.enum(WEBHOOK_OPERATION_ACTIONS),
    state: z.enum(WEBHOOK_OPERATION_STATES),
    dryRun: z.boolean(),
    freshSchedule: z.boolean(),
    registrationId: z.number().int().nullable(),
    filter: z.record(z.string(), z.unknown()).meta({
      description: 'The bulk filter, or the window `{ since, until }` of a recover or replay.',
    }),
    total: z.number().int().meta({ description: 'Webhooks (or, for replay, entity changes) selected.' }),
    done: z.number().int().meta({ description: 'How many of them were processed.' }),
    changed: z
      .number()
      .int()
      .meta({ description: 'Changed (a dry run: would change); for replay, webhooks written.' }),
    skipped: z.record(z.string(), z.number().int()).meta({ description: 'Left unchanged, by reason.' }),
    error: z.string().nullable().meta({ description: 'Why a `failed` operation stopped.' }),
    startedAt: timestamp,
    finishedAt: timestamp.nullable(),
    requestedByAccountId: z.number().int().nullable(),
  })
  .meta({ id: 'WebhookOperationRead' });
export type WebhookOperationRead = z.infer<typeof WebhookOperationRead>;

/** `POST /api/webhook-registrations/{id}/test`. */
export const WebhookTestRequest = z
  .strictObject({
    entityName: WebhookEntityNameIn.optional().meta({
      description: 'Defaults to the first subscribed event.',
    }),
    type: SubscribableEventType.optional(),
  })
  .meta({ id: 'WebhookTestRequest' });
export type WebhookTestRequest = z.infer<typeof WebhookTestRequest>;

export const WebhookTestResult = z
  .object({
    statusCode: z.number().int().nullable(),
    durationMs: z.number().int(),
    errorKind: z.string().nullable().meta({ description: 'Why it failed, as on an attempt; null on a 2xx.' }),
    responseExcerpt: z
      .string()
      .nullable()
      .meta({ description: 'The start of the answer, secrets redacted.' }),
  })
  .meta({ id: 'WebhookTestResult' });
export type WebhookTestResult = z.infer<typeof WebhookTestResult>;

/** The longest a previous signing secret stays valid after a rotation. */
export const MAX_SECRET_OVERLAP_MS = 7 * 24 * 3600 * 1000;
/** The overlap when none is asked for. */
export const DEFAULT_SECRET_OVERLAP = '24h';

/** `30m`, `24h`, `7d`: a duration in minutes, hours or days, as milliseconds; undefined otherwise. */
export function parseOverlap(text: string): number | undefined {
  const match = /^(\d{1,4})([mhd])$/.exec(text);
  if (!match) return undefined;
  const unit = { m: 60_000, h: 3_600_000, d: 86_400_000 }[match[2] as 'm' | 'h' | 'd'];
  return Number(match[1]) * unit;
}

/** `POST /api/webhook-registrations/{id}/rotate-secret`. */
export const RotateSecretRequest = z
  .strictObject({
    overlap: z
      .string()
      .refine((text) => parseOverlap(text) !== undefined, 'overlap must be a duration like 30m, 24h or 7d')
      .refine((text) => (parseOverlap(text) ?? 0) <= MAX_SECRET_OVERLAP_MS, 'overlap must be at most 7 days')
      .optional()
      .meta({
        description: 'How long deliveries keep the old signature too (default 24h, at most 7d; 0m: none).',
      }),
  })
  .meta({ id: 'RotateSecretRequest' });
export type RotateSecretRequest = z.infer<typeof RotateSecretRequest>;

export const RotateSecretResult = z
  .object({
    signingSecret: z.string().meta({ description: 'The new secret (`whsec_…`), shown only once.' }),
    previousSecretExpiresAt: timestamp.nullable().meta({
      description: 'Until when deliveries are signed with the previous secret too; null without overlap.',
    }),
  })
  .meta({ id: 'RotateSecretResult' });
export type RotateSecretResult = z.infer<typeof RotateSecretResult>;

/** One entry of the audit trail. */
export const OperatorActionRead = z
  .object({
    id: z.number().int(),
    action: z.enum(OPERATOR_ACTION_NAMES),
    accountId: z.number().int().nullable(),
    accountEmail: z
      .string()
      .nullable()
      .meta({
        description:
          'The acting account’s email, when its party is in the caller’s scope; null for the system and ' +
          'for another party’s accounts (shown by id).',
      }),
    partyId: z.number().int().meta({ description: 'The acting account’s party.' }),
    registrationId: z.number().int().nullable(),
    webhookId: z.number().int().nullable(),
    operationId: z.number().int().nullable(),
    filter: z
      .record(z.string(), z.unknown())
      .nullable()
      .meta({ description: 'The filter or window acted on.' }),
    dryRun: z.boolean(),
    changed: z.number().int().nullable().meta({ description: 'Rows changed; null while an operation runs.' }),
    detail: z.record(z.string(), z.unknown()).meta({ description: 'What else the action recorded.' }),
    created: timestamp,
  })
  .meta({ id: 'OperatorActionRead' });
export type OperatorActionRead = z.infer<typeof OperatorActionRead>;

export const PaginatedListOfOperatorActionRead = Page(OperatorActionRead).meta({
  id: 'PaginatedListOfOperatorActionRead',
});

/** One line of triage: Failed and Retrying webhooks alike in registration, error and status. */
export const WebhookIssueRead = z
  .object({
    registrationId: z.number().int(),
    partyId: z.number().int(),
    targetUrl: z.string(),
    state: z.number().int().meta({ description: '4 Failed or 2 Retrying.' }),
    errorKind: z.string().nullable(),
    lastStatusCode: z.number().int().nullable(),
    count: z.number().int(),
    firstSeen: timestamp.meta({ description: 'The oldest last attempt of the line.' }),
    lastSeen: timestamp.meta({ description: 'The newest last attempt of the line.' }),
    sampleWebhookId: z.number().int(),
    filter: WebhookBulkFilter.meta({
      description:
        'The bulk filter that selects exactly this line: its registration, state, error kind and status ' +
        'code, the last two null when the line’s are.',
    }),
  })
  .meta({ id: 'WebhookIssueRead' });
export type WebhookIssueRead = z.infer<typeof WebhookIssueRead>;

export const PaginatedListOfWebhookIssueRead = Page(WebhookIssueRead).meta({
  id: 'PaginatedListOfWebhookIssueRead',
});
