import { z } from 'zod';

/** One entry of the event catalog (`GET /api/webhook-event-types`), for clients that do not read OpenAPI. */
export const WebhookEventTypeRead = z
  .object({
    key: z.string().meta({
      description:
        'Entity and event name, `Property.Created`: the key of its entry in the OpenAPI `webhooks`.',
    }),
    entityName: z.string().meta({ description: 'The entity name a registration subscribes with.' }),
    type: z.number().int().meta({ description: 'WebhookEventType: 1 Created, 2 Updated, 3 Deleted.' }),
    eventName: z.enum(['Created', 'Updated', 'Deleted']),
    description: z.string(),
    schema: z.record(z.string(), z.unknown()).meta({
      description:
        'JSON Schema (draft 2020-12) of the delivery body, self-contained (the entity’s shape under `$defs`).',
    }),
    example: z
      .record(z.string(), z.unknown())
      .meta({ description: 'A body of this event that the schema accepts.' }),
  })
  .meta({ id: 'WebhookEventTypeRead' });
export type WebhookEventTypeRead = z.infer<typeof WebhookEventTypeRead>;
