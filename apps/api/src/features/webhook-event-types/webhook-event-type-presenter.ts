import type { WebhookEventTypeRead } from '@platform/shared';
import { z } from 'zod';
import type { WebhookEventTypeEntry } from './webhook-event-catalog';

type JsonSchema = Record<string, unknown>;

/** The JSON Schema (draft 2020-12) of a delivery body, self-contained: named shapes under `$defs`. */
export function deliveryBodyJsonSchema(entry: WebhookEventTypeEntry): JsonSchema {
  return z.toJSONSchema(entry.body, { target: 'draft-2020-12', io: 'output' }) as JsonSchema;
}

const EXAMPLE_TIME = '2026-01-15T09:30:00.000Z';
const EXAMPLE_STRINGS: Record<string, string> = {
  'date-time': EXAMPLE_TIME,
  date: '2026-01-15',
  email: 'office@example.com',
  uri: 'https://example.com/',
};

/**
 * A value `schema` accepts, made from the schema alone, so the example can never disagree with
 * it: a value's own first example (where the schema has a pattern, say), the first choice of a union that is not null, the parts of an intersection merged, an
 * enum's first value, every required
 * property of an object (optional ones are left out), 1 for a number within its bounds.
 */
export function exampleOf(schema: JsonSchema, root: JsonSchema = schema): unknown {
  if (typeof schema.$ref === 'string') {
    const name = schema.$ref.replace('#/$defs/', '');
    return exampleOf((root.$defs as Record<string, JsonSchema>)[name]!, root);
  }
  if ('const' in schema) return schema.const;
  if (Array.isArray(schema.examples) && schema.examples.length > 0) return schema.examples[0];
  if (Array.isArray(schema.enum)) return schema.enum[0];
  // every part must hold: the parts' objects merged, the later (narrower) ones winning
  if (Array.isArray(schema.allOf)) {
    return Object.assign({}, ...(schema.allOf as JsonSchema[]).map((part) => exampleOf(part, root)));
  }
  const choices = (schema.anyOf ?? schema.oneOf) as JsonSchema[] | undefined;
  if (choices) return exampleOf(choices.find((choice) => choice.type !== 'null') ?? choices[0]!, root);
  // `type: ['string', 'null']`: the type that is not null
  const type = Array.isArray(schema.type) ? schema.type.find((name) => name !== 'null') : schema.type;
  switch (type) {
    case 'object': {
      const properties = (schema.properties ?? {}) as Record<string, JsonSchema>;
      const required = (schema.required ?? []) as string[];
      return Object.fromEntries(required.map((name) => [name, exampleOf(properties[name] ?? {}, root)]));
    }
    case 'array':
      return schema.items ? [exampleOf(schema.items as JsonSchema, root)] : [];
    case 'string':
      return EXAMPLE_STRINGS[schema.format as string] ?? 'string';
    case 'integer':
    case 'number': {
      const minimum = typeof schema.minimum === 'number' ? schema.minimum : -Infinity;
      const maximum = typeof schema.maximum === 'number' ? schema.maximum : Infinity;
      return Math.min(Math.max(1, minimum), maximum);
    }
    case 'boolean':
      return true;
    case 'null':
      return null;
    default:
      return {};
  }
}

/** An entry of the catalog as `GET /api/webhook-event-types` answers it. */
export function presentEventType(entry: WebhookEventTypeEntry): WebhookEventTypeRead {
  const schema = deliveryBodyJsonSchema(entry);
  return {
    key: entry.key,
    entityName: entry.entityName,
    type: entry.type,
    eventName: entry.eventName,
    description: entry.description,
    schema,
    example: exampleOf(schema) as Record<string, unknown>,
  };
}
