import { z } from 'zod';
import { WebhookAuthType, WebhookEventType } from './enums';
import { Page } from './pagination';
import { WEBHOOK_DISABLED_REASONS, WEBHOOK_REGISTRATION_STATUSES } from './delivery-health';
import { WebhookLastAction } from './operator-actions';

const timestamp = z.iso.datetime({ offset: true });
const partyId = z.number().int().min(1).max(2147483647);

/**
 * The entity names a registration may subscribe to (docs/webhooks.md#events): the entities the API
 * changes. Every one of them emits Created, Updated and Deleted; ProcessFeed has no delete
 * endpoint, so its Deleted is accepted but only a platform-side deletion would emit it.
 * ConferenceRole is a resource of its own here (`/api/conference-roles`), so its
 * Created, Updated and Deleted fire like its siblings' (docs/decisions.md).
 */
export const WEBHOOK_ENTITY_NAMES = [
  'Party',
  'ContactDetails',
  'Property',
  'Entrance',
  'Unit',
  'UnitContract',
  'Document',
  'File',
  'Process',
  'ProcessFeed',
  'WorkOrder',
  'Inquiry',
  'Notice',
  'Conference',
  'Settings',
  'Topic',
  'TopicNote',
  'Resolution',
  'ResolutionOption',
  'VotingSession',
  'Mandate',
  'ConferenceVote',
  'PredefinedVote',
  'ConferenceRole',
  'TopicTemplate',
  'ResolutionTemplate',
  'ResolutionOptionTemplate',
] as const;
export type WebhookEntityName = (typeof WEBHOOK_ENTITY_NAMES)[number];

/** Entities that cannot be subscribed to (docs/webhooks.md#events); refused with their own message. */
export const UNSUBSCRIBABLE_ENTITY_NAMES = ['Account', 'Tenant', 'Offer', 'Invoice', 'UserTask'] as const;

/** The event types a registration may subscribe to; 4–6 (relation events) are unsupported. */
export const SUBSCRIBABLE_EVENT_TYPES = [
  WebhookEventType.Created,
  WebhookEventType.Updated,
  WebhookEventType.Deleted,
] as const;

const ENTITY_BY_LOWER_NAME = new Map<string, WebhookEntityName>(
  WEBHOOK_ENTITY_NAMES.map((name) => [name.toLowerCase(), name]),
);

/** The supported entity name `name` stands for (matched case-insensitively), or undefined. */
export function webhookEntityName(name: string): WebhookEntityName | undefined {
  return ENTITY_BY_LOWER_NAME.get(name.toLowerCase());
}

/** Why `name` cannot be subscribed to, listing the supported names. */
export function unsupportedEntityMessage(name: string): string {
  const supported = `supported: ${WEBHOOK_ENTITY_NAMES.join(', ')}`;
  const refused = UNSUBSCRIBABLE_ENTITY_NAMES.find((n) => n.toLowerCase() === name.toLowerCase());
  return refused
    ? `${refused} cannot be subscribed to; ${supported}`
    : `Unknown entity name "${name.slice(0, 50)}"; ${supported}`;
}

/** A supported entity name, given in any case and answered in the spec's spelling. */
export const WebhookEntityNameIn = z
  .string()
  .max(100)
  .transform((name, ctx) => {
    const canonical = webhookEntityName(name);
    if (canonical) return canonical;
    ctx.addIssue({ code: 'custom', message: unsupportedEntityMessage(name) });
    return z.NEVER;
  })
  .meta({
    type: 'string',
    enum: [...WEBHOOK_ENTITY_NAMES],
    description: 'A supported entity name, matched case-insensitively.',
  });

const EVENT_TYPE_MESSAGE =
  'must be 1 (Created), 2 (Updated) or 3 (Deleted); the relation events 4 (ReplaceRelation), ' +
  '5 (AddToRelation) and 6 (RemoveFromRelation) are unsupported';

/** A subscribable WebhookEventType: 1 Created, 2 Updated, 3 Deleted. */
export const SubscribableEventType = z
  .number({ error: EVENT_TYPE_MESSAGE })
  .int(EVENT_TYPE_MESSAGE)
  .refine((type) => (SUBSCRIBABLE_EVENT_TYPES as readonly number[]).includes(type), EVENT_TYPE_MESSAGE)
  .meta({ description: '1 Created, 2 Updated, 3 Deleted (4–6 are unsupported).' });

export const WEBHOOK_TARGET_URL_MAX_LENGTH = 2048;

/**
 * Why `text` is not an acceptable webhook target URL, or undefined. Only the form is checked
 * here; whether its host may be private is the API's call (it depends on configuration).
 */
export function targetUrlProblem(text: string): string | undefined {
  if (text.trim() !== text || /\s/.test(text)) return 'must not contain spaces';
  let url: URL;
  try {
    url = new URL(text);
  } catch {
    return 'must be an absolute http or https URL';
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') {
    return `must use http or https, not ${url.protocol.slice(0, -1).slice(0, 20)}`;
  }
  if (url.username || url.password) {
    return 'must not contain credentials; use targetAuthorization (Basic Auth) instead';
  }
  if (!url.hostname) return 'must name a host';
  // never sent in an HTTP request, so a fragment can only mislead
  if (url.hash || text.includes('#')) return 'must not contain a fragment (#…)';
  return undefined;
}

/** An absolute http(s) URL without credentials, at most 2048 characters. */
export const TargetUrl = z
  .string()
  .min(1, 'Must not be empty')
  .max(WEBHOOK_TARGET_URL_MAX_LENGTH)
  .superRefine((text, ctx) => {
    const problem = targetUrlProblem(text);
    if (problem) ctx.addIssue({ code: 'custom', message: problem });
  })
  .meta({
    description:
      'Absolute http or https URL, at most 2048 characters, without credentials or fragment. ' +
      'A literal private, loopback or link-local address or `localhost` is refused where private ' +
      'targets are not allowed (production).',
  });

/** One subscribed event in a create body. */
export const WebhookEventWrite = z
  .strictObject({ entityName: WebhookEntityNameIn, type: SubscribableEventType })
  .meta({ id: 'WebhookEventWrite' });
export type WebhookEventWrite = z.infer<typeof WebhookEventWrite>;

const AUTH_TYPE_MESSAGE =
  'must be 0 (No Auth), 1 (Basic Auth), 2 (Platform signed Bearer Token in Header), ' +
  '3 (Platform signed Bearer Token in Body) or 4 (Target API Token)';
const AUTH_TYPES = Object.values(WebhookAuthType) as number[];

/** Visible ASCII, as a header value carries it without encoding surprises. */
const headerSafe = /^[\x21-\x7e]+$/;
// RFC 7617: the user-id of Basic Auth cannot contain a colon; neither part may hold control characters
const basicPart = /^\P{Cc}+$/u;

/** Which credential fields each authorization type takes. */
const CREDENTIAL_FIELDS: Record<number, readonly ('username' | 'password' | 'apiKey')[]> = {
  [WebhookAuthType.NoAuth]: [],
  [WebhookAuthType.BasicAuth]: ['username', 'password'],
  [WebhookAuthType.PlatformBearerInHeader]: [],
  [WebhookAuthType.PlatformBearerInBody]: [],
  [WebhookAuthType.TargetApiToken]: ['apiKey'],
};

/**
 * How the service authenticates towards the target (docs/dispatcher.md#what-the-target-receives). Basic Auth needs `username` and
 * `password`, Target API Token needs `apiKey`; other types take no credentials.
 */
export const WebhookTargetAuthorizationWrite = z
  .strictObject({
    type: z
      .number({ error: AUTH_TYPE_MESSAGE })
      .int(AUTH_TYPE_MESSAGE)
      .refine((type) => AUTH_TYPES.includes(type), AUTH_TYPE_MESSAGE)
      .meta({ description: AUTH_TYPE_MESSAGE.replace('must be', 'One of') }),
    username: z
      .string()
      .min(1, 'Must not be empty')
      .max(200)
      .regex(basicPart, 'must not contain control characters')
      .refine((text) => !text.includes(':'), 'must not contain a colon (RFC 7617)')
      .optional()
      .meta({ description: 'Basic Auth (1) only.' }),
    password: z
      .string()
      .min(1, 'Must not be empty')
      .max(200)
      .regex(basicPart, 'must not contain control characters')
      .optional()
      .meta({ description: 'Basic Auth (1) only. Stored encrypted, never returned.' }),
    apiKey: z
      .string()
      .min(1, 'Must not be empty')
      .max(500)
      .regex(headerSafe, 'must be visible ASCII characters without spaces (it is sent as a header)')
      .optional()
      .meta({
        description: 'Target API Token (4) only: sent as `x-api-key`. Stored encrypted, never returned.',
      }),
  })
  .superRefine((auth, ctx) => {
    const allowed = CREDENTIAL_FIELDS[auth.type] ?? [];
    for (const field of ['username', 'password', 'apiKey'] as const) {
      const given = auth[field] !== undefined;
      if (allowed.includes(field) && !given) {
        ctx.addIssue({
          code: 'custom',
          path: [field],
          message: `Required for authorization type ${auth.type}`,
        });
      } else if (!allowed.includes(field) && given) {
        const takes = Object.entries(CREDENTIAL_FIELDS)
          .filter(([, fields]) => fields.includes(field))
          .map(([type]) => type)
          .join(', ');
        ctx.addIssue({
          code: 'custom',
          path: [field],
          message: `Not applicable to authorization type ${auth.type}; only type ${takes} takes it`,
        });
      }
    }
  })
  .meta({ id: 'WebhookTargetAuthorizationWrite' });
export type WebhookTargetAuthorizationWrite = z.infer<typeof WebhookTargetAuthorizationWrite>;

export const MAX_ENABLED_EVENTS = WEBHOOK_ENTITY_NAMES.length * SUBSCRIBABLE_EVENT_TYPES.length;

/**
 * The highest `rateLimit` (deliveries per second) a registration may ask for: far above what one
 * endpoint's in-flight limit lets through to a receiver that takes its time, so a higher figure
 * would never bind; the database's check says the same (docs/dispatcher.md › Rate limit).
 */
export const MAX_RATE_LIMIT = 10_000;

/** `rateLimit` of a registration write: a whole number of deliveries per second, or null for none. */
const RateLimit = z
  .number()
  .int('Must be a whole number of deliveries per second')
  .min(1, 'Must be at least 1 delivery per second (null: unlimited)')
  .max(MAX_RATE_LIMIT, `Must be at most ${MAX_RATE_LIMIT} deliveries per second (null: unlimited)`)
  .nullable()
  .meta({
    description:
      `Deliveries per second at most to this registration's endpoint, across every dispatcher, 1 to ${MAX_RATE_LIMIT}; ` +
      'null (the default) for no limit. Registrations of one party with one URL share an endpoint, and the lowest limit among them applies to it.',
  });

/** Body of POST /api/webhook-registrations. */
export const WebhookRegistrationWrite = z
  .strictObject({
    targetUrl: TargetUrl,
    enabledEvents: z
      .array(WebhookEventWrite)
      .min(1, 'Must list at least one event')
      .max(MAX_ENABLED_EVENTS)
      .superRefine((events, ctx) => {
        const seen = new Map<string, number>();
        events.forEach((event, index) => {
          const key = `${event.entityName}:${event.type}`;
          const first = seen.get(key);
          if (first === undefined) seen.set(key, index);
          else
            ctx.addIssue({
              code: 'custom',
              path: [index],
              message: `Duplicate of enabledEvents.${first} (${event.entityName}, type ${event.type})`,
            });
        });
      })
      .meta({ description: 'The (entityName, type) pairs to deliver; unique, at least one.' }),
    shouldGroup: z.boolean().optional().meta({
      description:
        'Deliver the changes of one entity one at a time, in the order they were made; a Failed webhook holds the later ones until an operator ends or retries it, unless shouldGroupContinueAfterFail. Default false.',
    }),
    shouldGroupContinueAfterFail: z.boolean().optional().meta({
      description:
        'With shouldGroup: a Failed webhook does not hold back the later ones of its group. Default false.',
    }),
    targetAuthorization: WebhookTargetAuthorizationWrite,
    rateLimit: RateLimit.optional(),
    partyId: partyId.optional().meta({
      description:
        'Admin only: the party (Admin or Property Management Company) the registration serves. ' +
        'Others register for their own party.',
    }),
  })
  .superRefine((write, ctx) => {
    if (write.shouldGroupContinueAfterFail && !write.shouldGroup) {
      ctx.addIssue({
        code: 'custom',
        path: ['shouldGroupContinueAfterFail'],
        message: 'Applies only to grouped registrations; set shouldGroup too',
      });
    }
  })
  .meta({ id: 'WebhookRegistrationWrite' });
export type WebhookRegistrationWrite = z.infer<typeof WebhookRegistrationWrite>;

/** The rule of docs/webhooks.md#registrations, named in every refusal of a change other than `targetUrl`. */
export const IMMUTABLE_REGISTRATION_RULE =
  'cannot be changed: create a new registration and delete the old one';

// accepted by the schema only to refuse it with the rule, not as an unknown field
const immutable = (field: string) =>
  z
    .unknown()
    .superRefine((_, ctx) =>
      ctx.addIssue({ code: 'custom', message: `${field} ${IMMUTABLE_REGISTRATION_RULE}` }),
    )
    .optional()
    .meta({ description: `Refused: ${field} ${IMMUTABLE_REGISTRATION_RULE}.` });

/** Body of PATCH /api/webhook-registrations/{id}: only `targetUrl` and `rateLimit` may change (docs/webhooks.md#registrations). */
export const WebhookRegistrationPatch = z
  .strictObject({
    targetUrl: TargetUrl.optional(),
    rateLimit: RateLimit.optional(),
    enabledEvents: immutable('enabledEvents'),
    targetAuthorization: immutable('targetAuthorization'),
    shouldGroup: immutable('shouldGroup'),
    shouldGroupContinueAfterFail: immutable('shouldGroupContinueAfterFail'),
    partyId: immutable('partyId'),
  })
  .meta({ id: 'WebhookRegistrationPatch' });
export type WebhookRegistrationPatch = z.infer<typeof WebhookRegistrationPatch>;

/** A subscribed event of a registration: the spec's WebhookEvent, and the `event` of a delivery. */
export const WebhookEventRead = z
  .object({
    id: z.number().int(),
    entityName: z.string(),
    type: z.number().int().meta({ description: 'WebhookEventType: 1 Created, 2 Updated, 3 Deleted.' }),
    created: timestamp,
    lastModified: timestamp.nullable(),
    deleted: timestamp.nullable(),
  })
  .meta({ id: 'WebhookEventRead' });
export type WebhookEventRead = z.infer<typeof WebhookEventRead>;

export const WebhookRegistrationRead = z
  .object({
    id: z.number().int(),
    partyId: z.number().int(),
    partyName: z.string().meta({ description: 'The name of the party the registration serves.' }),
    targetUrl: z.string(),
    enabledEvents: z.array(WebhookEventRead),
    shouldGroup: z.boolean(),
    shouldGroupContinueAfterFail: z.boolean(),
    targetAuthorization: z
      .object({ type: z.number().int() })
      .meta({ description: 'The authorization type only; credentials are never returned.' }),
    createdByAccountId: z.number().int().nullable(),
    created: timestamp,
    lastModified: timestamp.nullable(),
    deleted: timestamp.nullable(),
    status: z.enum(WEBHOOK_REGISTRATION_STATUSES).meta({
      description:
        '`active`: delivering. `paused` by an operator or `disabled` by the dispatcher: webhooks are still written, none is sent until resumed.',
    }),
    disabledReason: z.enum(WEBHOOK_DISABLED_REASONS).nullable().meta({
      description: 'Why it is disabled: the target answered 410 Gone (`gone`), or kept failing (`failing`).',
    }),
    statusChanged: timestamp.nullable().meta({ description: 'When the status last changed.' }),
    rateLimit: z.number().int().nullable().meta({
      description: 'Deliveries per second at most to its endpoint, across every dispatcher; null: unlimited.',
    }),
  })
  .meta({ id: 'WebhookRegistrationRead' });
export type WebhookRegistrationRead = z.infer<typeof WebhookRegistrationRead>;

/** The create response: the registration plus its signing secret, shown this once. */
export const WebhookRegistrationCreated = WebhookRegistrationRead.extend({
  signingSecret: z.string().meta({
    description:
      'The Standard Webhooks secret (`whsec_` + base64 of 32 random bytes) that signs every delivery. ' +
      'Shown only in this response; store it now.',
  }),
}).meta({ id: 'WebhookRegistrationCreated' });
export type WebhookRegistrationCreated = z.infer<typeof WebhookRegistrationCreated>;

export const PaginatedListOfWebhookRegistrationRead = Page(WebhookRegistrationRead).meta({
  id: 'PaginatedListOfWebhookRegistrationRead',
});

/**
 * The `user-agent` of every delivery: the dispatcher sends it, the console shows it among the
 * headers a delivery carried.
 */
export const WEBHOOK_USER_AGENT = 'PlatformWebhooks/1.0 (+https://platform.example.com/docs/webhooks)';

/**
 * The `event` of a delivery: the registration's subscribed WebhookEvent that the change matched
 * (docs/webhooks.md#the-delivery-request), as `deliveryBody` (`packages/db/src/delivery-body.ts`) writes it.
 */
export const WebhookDeliveryEvent = z
  .object({
    id: z.number().int().meta({ description: 'The subscribed WebhookEvent’s id.' }),
    type: z.number().int().meta({ description: 'WebhookEventType: 1 Created, 2 Updated, 3 Deleted.' }),
    entityName: z.string(),
    created: timestamp.nullable(),
    lastModified: timestamp.nullable(),
    deleted: timestamp.nullable(),
  })
  .meta({ id: 'WebhookDeliveryEvent' });

/**
 * The body of a delivery (docs/webhooks.md#the-delivery-request) carrying `entity` and `event`: the one
 * declaration of its shape, for the operator view (`WebhookDeliveryBody`) and for each entry of
 * the event catalog, where both are narrowed to one entity and event type.
 */
export function webhookDeliveryBodyOf<E extends z.ZodType, V extends z.ZodType>(entity: E, event: V) {
  return z.object({
    entity,
    event,
    initiatorPartyId: z.number().int().meta({ description: 'The party whose change it delivers.' }),
    initiatorAccountId: z
      .number()
      .int()
      .nullable()
      .meta({ description: 'The account that made the change; null for a platform-side change.' }),
    platformSignedBearerToken: z
      .string()
      .optional()
      .meta({ description: 'Authorization type 3 only; added at delivery, never stored.' }),
  });
}

/** The body a webhook delivers (docs/webhooks.md#the-delivery-request), of any entity. */
export const WebhookDeliveryBody = webhookDeliveryBodyOf(
  z.record(z.string(), z.unknown()).meta({ description: 'The full serialized entity.' }),
  WebhookDeliveryEvent,
).meta({ id: 'WebhookDeliveryBody' });
export type WebhookDeliveryBody = z.infer<typeof WebhookDeliveryBody>;

/**
 * The entity a test event (`x-webhook-test: 1`) carries instead of a record: id 0, which no record
 * has, and `test: true`, so a receiver cannot mistake it for real data
 * (`POST /api/webhook-registrations/{id}/test`).
 */
export const WebhookTestEntity = z.strictObject({ id: z.literal(0), test: z.literal(true) }).meta({
  id: 'WebhookTestEntity',
  description: 'The entity of a test event (header `x-webhook-test: 1`): no real record.',
});
export type WebhookTestEntity = z.infer<typeof WebhookTestEntity>;

/** One delivery of one change to one registration. */
export const WebhookRead = z
  .object({
    id: z.number().int(),
    registrationId: z.number().int(),
    partyId: z.number().int().meta({ description: 'The party of the registration.' }),
    partyName: z.string().meta({ description: 'The name of the party of the registration.' }),
    eventId: z.number().int(),
    eventType: z.number().int().meta({ description: 'WebhookEventType: 1 Created, 2 Updated, 3 Deleted.' }),
    entityName: z.string(),
    entityId: z.number().int(),
    entityChangeId: z.number().int(),
    state: z.number().int().meta({
      description: '1 Created, 2 Retrying, 3 Successful, 4 Failed, 5 Aborted, 6 Pending, 7 Resolved.',
    }),
    attemptCount: z.number().int(),
    nextAttemptAt: timestamp
      .nullable()
      .meta({ description: 'When the next attempt is due; null unless Created or Retrying.' }),
    groupKey: z
      .string()
      .nullable()
      .meta({ description: '`<entityName>:<entityId>` for grouped registrations.' }),
    groupSeq: z.number().int().nullable().meta({ description: 'Position in its group, in commit order.' }),
    initiatorPartyId: z.number().int(),
    initiatorPartyName: z
      .string()
      .nullable()
      .meta({ description: 'The name of the party whose change it delivers; null if that party is gone.' }),
    initiatorAccountId: z.number().int().nullable(),
    created: timestamp,
    lastModified: timestamp.nullable(),
    completedAt: timestamp.nullable(),
    targetUrl: z.string().meta({ description: 'Where the registration delivers.' }),
    lastAttemptAt: timestamp.nullable().meta({ description: 'When its last attempt started.' }),
    lastStatusCode: z.number().int().nullable().meta({ description: 'The status code of its last attempt.' }),
    lastErrorKind: z.string().nullable().meta({ description: 'Why its last attempt failed, when it did.' }),
    lastRequest: z
      .object({
        at: timestamp,
        statusCode: z.number().int().nullable(),
        errorKind: z.string().nullable(),
      })
      .nullable()
      .meta({
        description:
          'Its last attempt that sent a request (the last real answer of the target): differs from the last ' +
          'attempt when that one was skipped (`circuit-open`, …); null when no attempt sent one.',
      }),
    lastAction: WebhookLastAction.nullable().meta({
      description: 'The last operator action on it (who retried, aborted or resolved it, and when).',
    }),
  })
  .meta({ id: 'WebhookRead' });
export type WebhookRead = z.infer<typeof WebhookRead>;

/** A webhook with the body it delivers. */
export const WebhookDetailRead = WebhookRead.extend({
  payload: WebhookDeliveryBody.meta({
    description: 'The delivery body, without `platformSignedBearerToken`.',
  }),
}).meta({ id: 'WebhookDetailRead' });
export type WebhookDetailRead = z.infer<typeof WebhookDetailRead>;

/** The most webhooks a search (`q`) counts: past it the page says `totalCountCapped`. */
export const WEBHOOK_SEARCH_COUNT_CAP = 10_000;

export const PaginatedListOfWebhookRead = Page(WebhookRead)
  .extend({
    totalCountCapped: z
      .boolean()
      .optional()
      .meta({
        description:
          `With a search (\`q\`) only: more than \`totalCount\` webhooks match, the count stopped at ` +
          `${WEBHOOK_SEARCH_COUNT_CAP.toLocaleString('en')} (so a common word answers as fast as a rare one); ` +
          'the pages reach that many. Narrow the search to reach the rest.',
      }),
  })
  .meta({ id: 'PaginatedListOfWebhookRead' });

/** One HTTP try of a webhook. */
export const WebhookAttemptRead = z
  .object({
    id: z.number().int(),
    webhookId: z.number().int(),
    number: z.number().int().meta({ description: 'Attempt number, from 1.' }),
    startedAt: timestamp,
    durationMs: z.number().int(),
    statusCode: z.number().int().nullable(),
    errorKind: z.string().nullable().meta({ description: 'Why the attempt failed, when it did.' }),
    responseBody: z.string().nullable().meta({ description: 'The first 4 KiB of the response.' }),
    sentRequest: z.boolean().meta({ description: 'Whether a request was sent; false for a skip.' }),
    skipReason: z
      .string()
      .nullable()
      .meta({ description: 'For an attempt that sent nothing (a skip, e.g. circuit-open): why.' }),
    request: z
      .object({
        url: z.string(),
        headers: z.record(z.string(), z.string()),
      })
      .nullable()
      .meta({
        description:
          'The request as sent: its URL and headers, credentials shown as [redacted]. Null for a skip, ' +
          'and for attempts recorded before requests were.',
      }),
    responseHeaders: z.record(z.string(), z.string()).nullable().meta({
      description: 'The answer’s headers, at most 2 KiB, redacted like the body; null without an answer.',
    }),
    created: timestamp,
  })
  .meta({ id: 'WebhookAttemptRead' });
export type WebhookAttemptRead = z.infer<typeof WebhookAttemptRead>;

/** One attempt with the body it sent (GET /api/webhooks/{id}/attempts/{attemptId}). */
export const WebhookAttemptDetailRead = WebhookAttemptRead.extend({
  requestBody: WebhookDeliveryBody.nullable().meta({
    description:
      'The body sent: the webhook’s own, rebuilt from its recorded change (never stored twice); a ' +
      'platformSignedBearerToken it carried is shown as [redacted]. Null when nothing was sent.',
  }),
}).meta({ id: 'WebhookAttemptDetailRead' });
export type WebhookAttemptDetailRead = z.infer<typeof WebhookAttemptDetailRead>;

export const PaginatedListOfWebhookAttemptRead = Page(WebhookAttemptRead).meta({
  id: 'PaginatedListOfWebhookAttemptRead',
});

/** A group held by a Failed webhook of a registration without shouldGroupContinueAfterFail. */
export const BlockedGroupRead = z
  .object({
    registrationId: z.number().int(),
    partyId: z.number().int(),
    groupKey: z.string(),
    blockerWebhookId: z.number().int().meta({ description: 'The Failed webhook holding the group.' }),
    blockedSince: timestamp.nullable().meta({ description: 'When the blocker last changed (it failed).' }),
    pendingCount: z.number().int().meta({ description: 'Webhooks waiting behind the blocker.' }),
    oldestPendingCreated: timestamp.nullable(),
  })
  .meta({ id: 'BlockedGroupRead' });
export type BlockedGroupRead = z.infer<typeof BlockedGroupRead>;

/** GET /api/webhook-groups/progress: where a released group stands, counted exactly. */
export const WebhookGroupProgressRead = z
  .object({
    registrationId: z.number().int(),
    groupKey: z.string(),
    fromWebhookId: z.number().int().meta({
      description:
        'The released blocker: delivered, ended and held-again count its group from it on (ids >= it).',
    }),
    waiting: z.number().int().meta({ description: 'Pending webhooks of the group (behind its head).' }),
    inDelivery: z
      .number()
      .int()
      .meta({ description: 'Created, or Retrying that is due or held by a dispatcher.' }),
    retrying: z.number().int().meta({ description: 'Retrying, not held, next attempt later.' }),
    nextRetryAt: timestamp.nullable().meta({ description: 'The earliest next attempt of those.' }),
    delivered: z.number().int().meta({ description: 'Successful, from the released blocker on.' }),
    ended: z.number().int().meta({ description: 'Aborted or Resolved, from the released blocker on.' }),
    heldBy: z
      .number()
      .int()
      .nullable()
      .meta({
        description:
          'The Failed webhook (the released blocker retried and failed again, or a later one) that holds ' +
          'the group again; null while it is not held.',
      }),
    generatedAt: timestamp,
  })
  .meta({ id: 'WebhookGroupProgressRead' });
export type WebhookGroupProgressRead = z.infer<typeof WebhookGroupProgressRead>;

export const PaginatedListOfBlockedGroupRead = Page(BlockedGroupRead).meta({
  id: 'PaginatedListOfBlockedGroupRead',
});
