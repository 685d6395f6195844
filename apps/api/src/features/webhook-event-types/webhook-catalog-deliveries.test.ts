import { randomBytes } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { enqueueEntityChange } from '@platform/db';
import {
  WebhookAuthType,
  type WebhookEventTypeRead,
  type WebhookRegistrationCreated,
  type WebhookTestResult,
} from '@platform/shared';
import {
  eventually,
  startDispatcher,
  startTestTarget,
  type DispatcherProcess,
  type ReceivedRequest,
  type TestTarget,
} from '@platform/testkit';
import { Ajv2020, type ValidateFunction } from 'ajv/dist/2020.js';
import addFormats from 'ajv-formats';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { RESOURCES } from '../../resources/index';
import { SAMPLE_CREATE, SAMPLE_PATCH, uploadForm, worldParties } from '../../../tests/support/sample-writes';
import { useTestApi } from '../../../tests/support/api';
import { WEBHOOK_EVENT_CATALOG, WebhookDeliveryHeaders } from './webhook-event-catalog';

// The catalog is true: a real delivery of every subscribable entity and event, made through the
// API's write path (and, for the one event no API operation causes, the same enqueue statement),
// delivered by the real dispatcher process to a real HTTP target, is accepted by its entry's JSON
// Schema, both as GET /api/webhook-event-types serves it and as the committed OpenAPI document's
// `webhooks` section has it; its headers are the documented ones.

/** The dispatcher opens the secrets the API sealed: both get this key. */
const SECRET_KEY = randomBytes(32).toString('base64');
const EVENT_NAMES = ['Created', 'Updated', 'Deleted'] as const;
const DOCUMENT_ID = 'https://platform.example.com/openapi.json';
/** What an HTTP client adds to any request; every other header must be a documented one. */
const TRANSPORT_HEADERS = [
  'host',
  'connection',
  'content-length',
  'accept',
  'accept-encoding',
  'accept-language',
];

const { api, world } = useTestApi({ world: true, config: { SECRET_ENCRYPTION_KEY: SECRET_KEY } });
let target: TestTarget;
let dispatcher: DispatcherProcess;
/** Subscribed to every event: one without target authorization, one with the token in the body. */
let registrations: WebhookRegistrationCreated[];

beforeAll(async () => {
  await api.db.knex('parties').where({ id: world.pmc.id }).update({ conference_enabled: true });
  target = await startTestTarget();
  const enabledEvents = WEBHOOK_EVENT_CATALOG.map(({ entityName, type }) => ({ entityName, type }));
  registrations = [];
  for (const type of [WebhookAuthType.NoAuth, WebhookAuthType.PlatformBearerInBody]) {
    const response = await api.fetch('/api/webhook-registrations', {
      method: 'POST',
      token: world.pmc.full.token,
      json: { targetUrl: `${target.url}/${type}`, enabledEvents, targetAuthorization: { type } },
    });
    expect(response.status, await response.clone().text()).toBe(200);
    registrations.push((await response.json()) as WebhookRegistrationCreated);
  }
  dispatcher = await startDispatcher(api.db.url, { LOG_LEVEL: 'warn', SECRET_ENCRYPTION_KEY: SECRET_KEY });
}, 120_000);
afterAll(async () => {
  if (dispatcher) expect(await dispatcher.stop()).toBe(0);
  await target?.close();
});

const resourceNamed = (name: string) => RESOURCES.find((def) => def.name === name)!;

async function write(method: string, path: string, body?: unknown): Promise<{ id: number }> {
  const response = await api.fetch(path, {
    method,
    token: world.pmc.full.token,
    ...(body instanceof FormData ? { body } : body === undefined ? {} : { json: body }),
  });
  expect(response.status, `${method} ${path}: ${await response.clone().text()}`).toBe(
    method === 'DELETE' ? 204 : 200,
  );
  return method === 'DELETE' ? { id: 0 } : ((await response.json()) as { id: number });
}

/**
 * Creates, updates and deletes a row of every resource through the API as the PMC: each of the
 * catalog's entries once. ProcessFeed has no delete operation: its Deleted is what a deletion on
 * the platform's side sends, the row marked deleted and its read shape enqueued by the statement
 * the write path uses.
 */
async function causeEveryEvent(): Promise<void> {
  const parties = worldParties(world);
  const created = new Map<string, Promise<number>>();
  const order: string[] = [];
  const need = (name: string): Promise<number> => {
    let id = created.get(name);
    if (!id) {
      id = (async () => {
        const def = resourceNamed(name);
        const body = await SAMPLE_CREATE[name]!(need, 'main', parties);
        const row = await write('POST', def.path, def.name === 'File' ? uploadForm(body) : body);
        order.push(name);
        return row.id;
      })();
      created.set(name, id);
    }
    return id;
  };
  // rows a patch refers to (another option of the same resolution), deleted with their kind
  const extras: { name: string; id: number }[] = [];
  const extra = async (name: string) => {
    const def = resourceNamed(name);
    const { id } = await write('POST', def.path, await SAMPLE_CREATE[name]!(need, 'post', parties));
    extras.push({ name, id });
    return id;
  };
  for (const def of RESOURCES) await need(def.name);
  for (const def of RESOURCES) {
    await write(
      'PATCH',
      `${def.path}/${await need(def.name)}`,
      await SAMPLE_PATCH[def.name]!(extra, parties),
    );
  }
  // children before the rows they refer to
  for (const name of [...order].reverse()) {
    const def = resourceNamed(name);
    for (const row of extras.filter((row) => row.name === name))
      await write('DELETE', `${def.path}/${row.id}`);
    const id = await need(name);
    if (def.deletable !== false) {
      await write('DELETE', `${def.path}/${id}`);
      continue;
    }
    await api.db.knex.transaction(async (trx) => {
      const [row] = await trx(def.table)
        .where({ id })
        .update({ deleted: new Date(), last_modified: new Date() })
        .returning('*');
      await enqueueEntityChange(trx, {
        entityName: def.name,
        type: 3,
        entityId: id,
        entity: def.present(row),
        initiatorPartyId: world.pmc.id,
        initiatorAccountId: null,
      });
    });
  }
}

/** The catalog entry a delivery claims to be, from its body. */
function keyOf(request: ReceivedRequest): string {
  const { event } = JSON.parse(request.body) as { event: { entityName: string; type: 1 | 2 | 3 } };
  return `${event.entityName}.${EVENT_NAMES[event.type - 1]}`;
}

describe('the event catalog against real deliveries', () => {
  it('accepts the body and headers of a delivery of every subscribable entity and event', async () => {
    await causeEveryEvent();
    const test = await api.fetch(`/api/webhook-registrations/${registrations[1]!.id}/test`, {
      method: 'POST',
      token: world.pmc.full.token,
      json: { entityName: 'Unit', type: 2 },
    });
    expect(((await test.json()) as WebhookTestResult).statusCode).toBe(200);
    const keys = WEBHOOK_EVENT_CATALOG.map((entry) => entry.key);
    const receivedKeys = (path: string) =>
      new Set(target.requests.filter((request) => request.path === path).map(keyOf));
    await eventually(
      () =>
        registrations.every(
          (registration) => receivedKeys(new URL(registration.targetUrl).pathname).size >= keys.length,
        ),
      { timeoutMs: 120_000, what: 'a delivery of every entry to both registrations' },
    );
    for (const registration of registrations) {
      expect([...receivedKeys(new URL(registration.targetUrl).pathname)].sort()).toEqual([...keys].sort());
    }

    // the schemas as served, and as the committed document has them
    const served = await api.fetch('/api/webhook-event-types', { token: world.pmc.full.token });
    const catalog = (await served.json()) as WebhookEventTypeRead[];
    const document = JSON.parse(
      readFileSync(join(import.meta.dirname, '..', '..', '..', 'openapi.json'), 'utf8'),
    ) as Record<string, unknown>;
    const ajv = addFormats(new Ajv2020({ strict: false }));
    ajv.addSchema({ ...document, $id: DOCUMENT_ID });
    const validators = new Map<string, ValidateFunction[]>(
      catalog.map((entry) => [
        entry.key,
        [
          ajv.compile(entry.schema),
          ajv.getSchema(
            `${DOCUMENT_ID}#/webhooks/${entry.key}/post/requestBody/content/application~1json/schema`,
          )!,
        ],
      ]),
    );

    const documented = Object.keys(WebhookDeliveryHeaders.shape);
    let tests = 0;
    for (const request of target.requests) {
      const key = keyOf(request);
      const body = JSON.parse(request.body) as Record<string, unknown>;
      for (const validate of validators.get(key)!) {
        expect(validate(body), `${key} ${request.body}: ${ajv.errorsText(validate.errors)}`).toBe(true);
        // and each is strict: a field the entity does not have is refused
        expect(validate({ ...body, entity: { ...(body.entity as object), stray: 1 } })).toBe(false);
      }
      const headers = WebhookDeliveryHeaders.safeParse(request.headers);
      expect(headers.error, `${key} headers`).toBeUndefined();
      const undocumented = Object.keys(request.headers).filter(
        (name) => !documented.includes(name) && !TRANSPORT_HEADERS.includes(name),
      );
      expect(undocumented, key).toEqual([]);
      if (request.headers['x-webhook-test'] !== undefined) {
        tests += 1;
        expect(body.entity).toEqual({ id: 0, test: true });
      }
      // the token in the body where the registration asks for it, and nowhere else
      expect('platformSignedBearerToken' in body).toBe(
        request.path.endsWith(`/${WebhookAuthType.PlatformBearerInBody}`),
      );
    }
    expect(tests).toBe(1);
  }, 240_000);
});
