import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { loadSigningKey, signWebhookToken } from '@platform/crypto';
import { partyBucket } from '@platform/db';
import {
  ALL_PARTY_TYPES,
  PartyType,
  SUBSCRIBABLE_EVENT_TYPES,
  WEBHOOK_ENTITY_NAMES,
  WebhookEventType,
  type WebhookEventTypeRead,
} from '@platform/shared';
import { Ajv2020 } from 'ajv/dist/2020.js';
import addFormats from 'ajv-formats';
import { describe, expect, it } from 'vitest';
import { expectProblem, expectUnauthenticated } from '../../../tests/support/http';
import { buildOpenApiDocument } from '../../http/openapi';
import { ROUTES, WEBHOOKS } from '../../routes';
import { expectAccessRules, testPrivateKeyPem, useTestApi } from '../../../tests/support/api';

// GET /api/webhook-event-types and the `webhooks` section of the OpenAPI document: both list
// exactly what the registration API accepts, and every schema accepts its own example.

const EVENT_NAMES = ['Created', 'Updated', 'Deleted'] as const;
/** `Property.Created`, … for every subscribable entity and event type, in declaration order. */
const SUBSCRIBABLE = WEBHOOK_ENTITY_NAMES.flatMap((entity) =>
  SUBSCRIBABLE_EVENT_TYPES.map((type) => `${entity}.${EVENT_NAMES[type - 1]}`),
);

const { api, world } = useTestApi({ world: true });

async function list(query = '', token = world.pmc.full.token): Promise<WebhookEventTypeRead[]> {
  const response = await api.fetch(`/api/webhook-event-types${query}`, { token });
  expect(response.status, await response.clone().text()).toBe(200);
  return (await response.json()) as WebhookEventTypeRead[];
}

describe('the OpenAPI webhooks section', () => {
  it('has one entry per subscribable entity and event type, in the committed document too', () => {
    expect(SUBSCRIBABLE).toHaveLength(WEBHOOK_ENTITY_NAMES.length * 3);
    expect(Object.keys(buildOpenApiDocument(ROUTES, { webhooks: WEBHOOKS }).webhooks ?? {})).toEqual(
      SUBSCRIBABLE,
    );
    const committed = JSON.parse(
      readFileSync(join(import.meta.dirname, '..', '..', '..', 'openapi.json'), 'utf8'),
    ) as { webhooks: Record<string, unknown> };
    expect(Object.keys(committed.webhooks)).toEqual(SUBSCRIBABLE);
  });

  it('is served with the document', async () => {
    const response = await api.fetch('/api/openapi.json');
    const document = (await response.json()) as {
      webhooks: Record<string, { post: { operationId: string } }>;
    };
    expect(Object.keys(document.webhooks)).toEqual(SUBSCRIBABLE);
    expect(document.webhooks['Unit.Updated']?.post.operationId).toBe('webhookUnitUpdated');
  });
});

describe('GET /api/webhook-event-types', () => {
  it('filters by entity name (any case) and by event type', async () => {
    expect((await list('?entityName=unit')).map((entry) => entry.key)).toEqual([
      'Unit.Created',
      'Unit.Updated',
      'Unit.Deleted',
    ]);
    const updates = await list('?type=2');
    expect(updates).toHaveLength(WEBHOOK_ENTITY_NAMES.length);
    expect(new Set(updates.map((entry) => entry.eventName))).toEqual(new Set(['Updated']));
    expect((await list('?entityName=ProcessFeed&type=3')).map((entry) => entry.description)).toEqual([
      expect.stringContaining('only a deletion on the platform’s side sends it'),
    ]);
  });

  it('answers a 400 ProblemDetails naming a filter it cannot use', async () => {
    const problem = async (query: string) =>
      expectProblem(
        await api.fetch(`/api/webhook-event-types${query}`, { token: world.pmc.full.token }),
        400,
      );
    expect((await problem('?entityName=Account')).errors?.entityName?.[0]).toContain(
      'Account cannot be subscribed to',
    );
    expect((await problem('?entityName=Nothing')).errors?.entityName?.[0]).toContain('Unknown entity name');
    expect((await problem('?type=4')).errors?.type).toEqual(['type must be at most 3']);
    expect((await problem('?type=two')).errors?.type).toEqual(['type must be a whole number']);
    expect(Object.keys((await problem('?page=2')).errors ?? {})).toEqual(['page']);
  });

  it('is open to every signed-in account, whatever its party type or permissions, and to no other token', async () => {
    await expectAccessRules(api, world, {
      method: 'GET',
      path: '/api/webhook-event-types',
      allow: ALL_PARTY_TYPES,
    });
    expect(await list('?type=1', world.contractor.bare.token)).toHaveLength(WEBHOOK_ENTITY_NAMES.length);
    await expectUnauthenticated(await api.fetch('/api/webhook-event-types'));
    // a registration's service-signed token reads domain data only
    const [registration] = await api.deps
      .knex('webhook_registrations')
      .insert({
        party_id: world.pmc.id,
        bucket: partyBucket(api.deps.knex, world.pmc.id),
        target_url: 'http://127.0.0.1:9/hook',
        signing_secret: 'x',
      })
      .returning('id');
    const { token } = await signWebhookToken(
      await loadSigningKey(testPrivateKeyPem()),
      {
        registrationId: registration.id as number,
        partyId: world.pmc.id,
        partyName: world.pmc.name,
        partyType: PartyType.PropertyManagementCompany,
      },
      { issuer: api.deps.config.JWT_ISSUER, audience: api.deps.config.JWT_AUDIENCE, now: api.clock.now() },
    );
    expect((await api.fetch('/api/properties', { token })).status).toBe(200);
    await expectProblem(await api.fetch('/api/webhook-event-types', { token }), 403);
  });

  // last: compiling 81 schemas holds the event loop for seconds, longer than a kept-alive
  // connection to the test API lives
  it('lists every subscribable entity and event type with a schema that accepts its example', async () => {
    const entries = await list();
    expect(entries.map((entry) => entry.key)).toEqual(SUBSCRIBABLE);
    const ajv = addFormats(new Ajv2020());
    for (const entry of entries) {
      expect(entry).toMatchObject({
        key: `${entry.entityName}.${entry.eventName}`,
        type: WebhookEventType[entry.eventName],
        description: expect.stringContaining(entry.entityName),
      });
      const validate = ajv.compile(entry.schema);
      expect(validate(entry.example), `${entry.key}: ${ajv.errorsText(validate.errors)}`).toBe(true);
      expect(entry.example).toMatchObject({
        event: { type: entry.type, entityName: entry.entityName },
        entity: expect.objectContaining({ id: expect.any(Number) }),
      });
      // the schema is the entry's own: another event type, another entity or a stray field is refused
      const event = entry.example.event as Record<string, unknown>;
      expect(validate({ ...entry.example, event: { ...event, type: (entry.type % 3) + 1 } })).toBe(false);
      expect(validate({ ...entry.example, event: { ...event, entityName: 'Account' } })).toBe(false);
      expect(validate({ ...entry.example, entity: { ...(entry.example.entity as object), stray: 1 } })).toBe(
        false,
      );
      // a test event's entity is accepted in place of a record
      expect(validate({ ...entry.example, entity: { id: 0, test: true } })).toBe(true);
    }
  });
});
