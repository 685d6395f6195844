import {
  SUBSCRIBABLE_EVENT_TYPES,
  WEBHOOK_ENTITY_NAMES,
  WEBHOOK_USER_AGENT,
  WebhookDeliveryEvent,
  webhookDeliveryBodyOf,
  WebhookEventType,
  WebhookTestEntity,
  type WebhookEntityName,
} from '@platform/shared';
import { z } from 'zod';
import { RESOURCES } from '../../resources/index';
import type { ResourceDefinition } from '../../resources/resource';
import { TEST_EVENT_HEADER } from '../webhook-registrations/webhook-registration-test-event';

/** The name of a subscribable event type, as the catalog's keys spell it. */
export type WebhookEventName = 'Created' | 'Updated' | 'Deleted';

/** One entity and event type a registration may subscribe to, and what its deliveries carry. */
export interface WebhookEventTypeEntry {
  /** `Property.Created`: the key of its entry in the OpenAPI `webhooks` section. */
  key: string;
  entityName: WebhookEntityName;
  type: 1 | 2 | 3;
  eventName: WebhookEventName;
  description: string;
  /** The body of its deliveries: the entity's read shape (or a test event's entity) and the event. */
  body: z.ZodType;
}

const EVENT_NAMES = Object.fromEntries(
  Object.entries(WebhookEventType).map(([name, type]) => [type, name]),
) as Record<1 | 2 | 3, WebhookEventName>;

const WHAT_THE_ENTITY_IS: Record<WebhookEventName, string> = {
  Created: 'as it was created',
  Updated: 'as the change left it',
  Deleted: 'as it was when deleted (`deleted` set)',
};

/** What an entry's deliveries are, for its OpenAPI description and the catalog's `description`. */
function describe(def: ResourceDefinition, type: 1 | 2 | 3): string {
  const eventName = EVENT_NAMES[type];
  let text =
    `Sent when a ${def.name} is ${eventName.toLowerCase()}, to the registrations of the writer’s ` +
    `party that subscribe to ${def.name} ${type} (${eventName}). \`entity\` is the ${def.name} ` +
    `${WHAT_THE_ENTITY_IS[eventName]}, in the shape its API reads answer (\`${def.path}/{id}\`); ` +
    'a test event carries `WebhookTestEntity` instead.';
  if (eventName === 'Deleted' && def.deletable === false) {
    text += ` No API operation deletes a ${def.name}: only a deletion on the platform’s side sends it.`;
  }
  return text;
}

const resourceNamed = (name: string): ResourceDefinition => {
  const def = RESOURCES.find((resource) => resource.name === name);
  // a subscribable entity the API has no resource for would be a catalog without a schema
  if (!def) throw new Error(`The subscribable entity ${name} has no resource definition`);
  return def;
};

/**
 * Every entity and event type a registration may subscribe to, from the same declarations the
 * registration API validates against (`WEBHOOK_ENTITY_NAMES`, `SUBSCRIBABLE_EVENT_TYPES`) and
 * change capture sends (each resource's read shape, which its `present` writes and the write path
 * captures), in that order.
 */
export const WEBHOOK_EVENT_CATALOG: readonly WebhookEventTypeEntry[] = WEBHOOK_ENTITY_NAMES.flatMap(
  (entityName) => {
    const def = resourceNamed(entityName);
    return SUBSCRIBABLE_EVENT_TYPES.map((type) => {
      const eventName = EVENT_NAMES[type];
      // the shared event shape, narrowed to this entry's entity and type
      const event = z.intersection(
        WebhookDeliveryEvent,
        z.looseObject({ type: z.literal(type), entityName: z.literal(entityName) }),
      );
      return {
        key: `${entityName}.${eventName}`,
        entityName,
        type,
        eventName,
        description: describe(def, type),
        body: webhookDeliveryBodyOf(z.union([def.read, WebhookTestEntity]), event),
      };
    });
  },
);

/**
 * The headers of every delivery (`buildDeliveryRequest` in `packages/delivery`, plus what the
 * dispatcher and the test event add), as OpenAPI header parameters.
 */
export const WebhookDeliveryHeaders = z.object({
  'webhook-id': z.string().meta({
    param: { id: 'WebhookIdHeader' },
    description:
      'Standard Webhooks message id: the webhook’s id, the same on every retry and redelivery of ' +
      'one webhook; `test_<uuid>` for a test event. Deduplicate on it.',
    example: '4711',
  }),
  'webhook-timestamp': z
    .string()
    .regex(/^\d+$/)
    .meta({
      param: { id: 'WebhookTimestampHeader' },
      description: 'Standard Webhooks timestamp: seconds since the Unix epoch when this attempt was signed.',
      example: '1767225600',
    }),
  'webhook-signature': z.string().meta({
    param: { id: 'WebhookSignatureHeader' },
    description:
      'Standard Webhooks signatures, space separated: `v1,` + base64 HMAC-SHA256 of ' +
      '`<webhook-id>.<webhook-timestamp>.<body>` with the registration’s secret; during a secret ' +
      'rotation’s overlap also one with the previous secret. Accept the message when any verifies.',
    example: 'v1,K5oZfzN95Z9UVu1EsfQmfVNQhnkZ2pj9o9NDN/H/pI4=',
  }),
  'content-type': z
    .literal('application/json')
    .meta({ param: { id: 'WebhookContentTypeHeader' }, description: 'Always JSON.' }),
  'user-agent': z
    .literal(WEBHOOK_USER_AGENT)
    .meta({ param: { id: 'WebhookUserAgentHeader' }, description: 'Every delivery’s user agent.' }),
  traceparent: z
    .string()
    .optional()
    .meta({
      param: { id: 'WebhookTraceparentHeader' },
      description:
        'W3C trace context of this attempt, when the platform traces (docs/dispatcher.md › Tracing); ' +
        'continue it to join the trace.',
    }),
  tracestate: z
    .string()
    .optional()
    .meta({
      param: { id: 'WebhookTracestateHeader' },
      description: 'W3C trace state, when the write that caused the change sent one.',
    }),
  [TEST_EVENT_HEADER]: z
    .literal('1')
    .optional()
    .meta({
      param: { id: 'WebhookTestHeader' },
      description: 'Present (`1`) only on a test event; its `entity` is `WebhookTestEntity`.',
    }),
  authorization: z
    .string()
    .optional()
    .meta({
      param: { id: 'WebhookAuthorizationHeader' },
      description:
        'By the registration’s authorization type: `Basic …` (1) or `Bearer <platform-signed token>` (2).',
    }),
  'x-api-key': z
    .string()
    .optional()
    .meta({
      param: { id: 'WebhookApiKeyHeader' },
      description: 'Authorization type 4 only: the target’s API key.',
    }),
});
