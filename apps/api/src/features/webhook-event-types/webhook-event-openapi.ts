import { sentSchema, type OpenApiWebhooks } from '../../http/openapi';
import {
  WEBHOOK_EVENT_CATALOG,
  WebhookDeliveryHeaders,
  type WebhookEventTypeEntry,
} from './webhook-event-catalog';
import { deliveryBodyJsonSchema, exampleOf } from './webhook-event-type-presenter';

/** What a receiver's answers mean to the dispatcher (docs/receiving-webhooks.md › Answers and retries). */
const ANSWERS = {
  '200': {
    description:
      'Any 2xx: delivered. Answer within the timeout (15 s by default) and do slow work ' +
      'afterwards. A 3xx is a failure: redirects are not followed.',
  },
  '410': {
    description:
      'Gone: the endpoint wants no more deliveries. The attempt fails and the registration is ' +
      'disabled; its webhooks wait until an operator resumes it.',
  },
  '429': {
    description:
      'Too many requests: retried on the schedule, not before `Retry-After` (seconds or an HTTP ' +
      'date) when given, but at most twice the scheduled wait. The same holds for 503; any other ' +
      'answer, a timeout or a connection error is retried on the schedule.',
  },
} as const;

/**
 * The catalog as the OpenAPI `webhooks` section: one `post` per entry, keyed `Property.Created`,
 * whose body is rendered as what the API sends (`sentSchema`), with the schemas the bodies name.
 */
export function webhookCatalogOpenApi(
  catalog: readonly WebhookEventTypeEntry[] = WEBHOOK_EVENT_CATALOG,
): OpenApiWebhooks {
  const webhooks: OpenApiWebhooks = { paths: {}, schemas: {} };
  for (const entry of catalog) {
    const body = sentSchema(entry.body);
    Object.assign(webhooks.schemas, body.components);
    webhooks.paths[entry.key] = {
      post: {
        operationId: `webhook${entry.entityName}${entry.eventName}`,
        summary: `${entry.entityName} ${entry.eventName.toLowerCase()}`,
        description: entry.description,
        tags: ['Webhook events'],
        security: [],
        requestParams: { header: WebhookDeliveryHeaders },
        requestBody: {
          required: true,
          content: {
            'application/json': { schema: body.schema, example: exampleOf(deliveryBodyJsonSchema(entry)) },
          },
        },
        responses: ANSWERS,
      },
    };
  }
  return webhooks;
}
