import {
  ALL_PARTY_TYPES,
  SUBSCRIBABLE_EVENT_TYPES,
  WebhookEntityNameIn,
  WebhookEventTypeRead,
} from '@platform/shared';
import { z } from 'zod';
import { defineRoute, type RouteDefinition } from '../../http/route';
import { wholeNumberText } from '../../http/validate';
import { WEBHOOK_EVENT_CATALOG } from './webhook-event-catalog';
import { presentEventType } from './webhook-event-type-presenter';

let presented: WebhookEventTypeRead[] | undefined;
/** The whole catalog as answered, built on first use (about a second) and kept: it changes only with the code. */
const catalog = () => (presented ??= WEBHOOK_EVENT_CATALOG.map(presentEventType));

const WebhookEventTypeQuery = z.strictObject({
  entityName: WebhookEntityNameIn.optional().meta({ description: 'Only this entity’s events.' }),
  type: wholeNumberText('type', Math.min(...SUBSCRIBABLE_EVENT_TYPES), Math.max(...SUBSCRIBABLE_EVENT_TYPES))
    .optional()
    .meta({ description: 'Only this event type: 1 Created, 2 Updated, 3 Deleted.' }),
});

export const webhookEventTypeRoutes: RouteDefinition[] = [
  defineRoute({
    method: 'get',
    path: '/api/webhook-event-types',
    summary: 'List the webhook event types a registration may subscribe to',
    description:
      'The event catalog: every entity and event type the registration API accepts in ' +
      '`enabledEvents`, each with the JSON Schema of its delivery body and an example body. The ' +
      'same catalog is the `webhooks` section of this document. Any signed-in account may read it: ' +
      'it describes the API, not anyone’s data. Ordered by entity (as `WEBHOOK_ENTITY_NAMES`), then type.',
    tags: ['Webhook'],
    auth: { allow: ALL_PARTY_TYPES },
    query: WebhookEventTypeQuery,
    response: { description: 'The matching event types', schema: z.array(WebhookEventTypeRead) },
    handler: ({ query }) =>
      catalog().filter(
        (entry) =>
          (query.entityName === undefined || entry.entityName === query.entityName) &&
          (query.type === undefined || entry.type === query.type),
      ),
  }),
];
