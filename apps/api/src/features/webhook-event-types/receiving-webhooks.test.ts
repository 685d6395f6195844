import { randomBytes } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import type { Server } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import type { RotateSecretResult, WebhookRegistrationCreated, WebhookTestResult } from '@platform/shared';
import { eventually, freePort, startDispatcher, type DispatcherProcess } from '@platform/testkit';
import { Webhook } from 'standardwebhooks';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildAccount, buildParty, login, useTestApi } from '../../../tests/support/api';
import { createProperty, patchProperty, register } from '../../../tests/support/webhooks';

// The Node receiver of docs/receiving-webhooks.md, taken from the page as it is, run against the
// real dispatcher's deliveries and the API's test event: it verifies, ignores test events and
// duplicates, and keeps verifying through a secret rotation's overlap with the old secret alone.

const API = join(import.meta.dirname, '..', '..', '..');
const GUIDE = join(API, '..', '..', 'docs', 'receiving-webhooks.md');
/** The dispatcher opens the secrets the API sealed: both get this key. */
const SECRET_KEY = randomBytes(32).toString('base64');

interface Receiver {
  createReceiver(options: {
    secrets: string[];
    onEvent: (delivery: Delivery, webhookId: string) => unknown;
    seen?: Set<string>;
  }): Server;
}
interface Delivery {
  entity: { id: number; name?: string };
  event: { entityName: string; type: number };
}

const dir = mkdtempSync(join(tmpdir(), 'receiving-webhooks-'));
// the example imports standardwebhooks, a dev dependency of the API
symlinkSync(join(API, 'node_modules'), join(dir, 'node_modules'), 'dir');

const { api } = useTestApi({ config: { SECRET_ENCRYPTION_KEY: SECRET_KEY } });
let dispatcher: DispatcherProcess;
let server: Server;
let url: string;
let token: string;
let registration: WebhookRegistrationCreated;
const handled: { id: string; delivery: Delivery }[] = [];
let failNext = false;

beforeAll(async () => {
  const code = /```js receiver\.mjs\n([\s\S]*?)```/.exec(readFileSync(GUIDE, 'utf8'))?.[1];
  if (!code) throw new Error('docs/receiving-webhooks.md has no ```js receiver.mjs block');
  writeFileSync(join(dir, 'receiver.mjs'), code);
  const { createReceiver } = (await import(pathToFileURL(join(dir, 'receiver.mjs')).href)) as Receiver;

  const party = await buildParty(api.deps, { type: 2 });
  token = (await login(api, (await buildAccount(api.deps, { partyId: party.id })).email)).accessToken;
  // the registration names the receiver's address; the receiver takes the registration's secret
  const port = await freePort();
  url = `http://127.0.0.1:${port}/webhooks`;
  registration = await register(api, token, { targetUrl: url, shouldGroup: true });
  server = createReceiver({
    secrets: [registration.signingSecret],
    onEvent: (delivery, id) => {
      if (failNext) {
        failNext = false;
        throw new Error('the database is down');
      }
      handled.push({ id, delivery });
    },
  });
  await new Promise<void>((resolve) => server.listen(port, '127.0.0.1', resolve));
  dispatcher = await startDispatcher(api.db.url, { LOG_LEVEL: 'warn', SECRET_ENCRYPTION_KEY: SECRET_KEY });
}, 120_000);
afterAll(async () => {
  if (dispatcher) expect(await dispatcher.stop()).toBe(0);
  server?.close();
  rmSync(dir, { recursive: true, force: true });
});

/** Posts `body` to the receiver signed with `secret` as webhook `id`, at `at`. */
function post(body: string, id: string, secret: string, at = new Date()): Promise<Response> {
  return fetch(url, {
    method: 'POST',
    body,
    headers: {
      'content-type': 'application/json',
      'webhook-id': id,
      'webhook-timestamp': String(Math.floor(at.getTime() / 1000)),
      'webhook-signature': new Webhook(secret).sign(id, at, body),
    },
  });
}

describe('the Node receiver of docs/receiving-webhooks.md', () => {
  let propertyId: number;

  it('handles the dispatcher’s deliveries, in order, each once', async () => {
    propertyId = await createProperty(api, token, 'Lindenhof');
    await patchProperty(api, token, propertyId, { name: 'Lindenhof Nord' });
    await patchProperty(api, token, propertyId, { name: 'Lindenhof Süd' });
    await eventually(() => handled.length === 3, { what: 'three handled deliveries' });
    expect(handled.map(({ delivery }) => [delivery.event.type, delivery.entity.name])).toEqual([
      [1, 'Lindenhof'],
      [2, 'Lindenhof Nord'],
      [2, 'Lindenhof Süd'],
    ]);
    const rows = await api.db.knex('webhooks').where({ registration_id: registration.id }).orderBy('id');
    expect(handled.map(({ id }) => id)).toEqual(rows.map((row) => String(row.id)));
  });

  it('answers a test event 2xx without handling it', async () => {
    const response = await api.fetch(`/api/webhook-registrations/${registration.id}/test`, {
      method: 'POST',
      token,
    });
    expect(((await response.json()) as WebhookTestResult).statusCode).toBe(204);
    expect(handled).toHaveLength(3);
  });

  it('answers a duplicate 2xx without handling it again, and refuses what does not verify', async () => {
    const [first] = handled;
    const body = JSON.stringify(first!.delivery);
    expect((await post(body, first!.id, registration.signingSecret)).status).toBe(204);
    expect(handled).toHaveLength(3);
    const stranger = `whsec_${randomBytes(32).toString('base64')}`;
    expect((await post(body, 'forged-1', stranger)).status).toBe(400);
    // a captured delivery sent again an hour later
    const stale = new Date(Date.now() - 3_600_000);
    expect((await post(body, 'replayed-1', registration.signingSecret, stale)).status).toBe(400);
    expect(handled).toHaveLength(3);
  });

  it('asks to be retried later when it could not handle a delivery', async () => {
    failNext = true;
    const response = await post(JSON.stringify(handled[0]!.delivery), 'fresh-1', registration.signingSecret);
    expect(response.status).toBe(503);
    expect(response.headers.get('retry-after')).toBe('60');
    expect(
      (await post(JSON.stringify(handled[0]!.delivery), 'fresh-1', registration.signingSecret)).status,
    ).toBe(204);
    expect(handled.at(-1)?.id).toBe('fresh-1');
  });

  it('keeps verifying with the old secret through a rotation’s overlap', async () => {
    const rotate = await api.fetch(`/api/webhook-registrations/${registration.id}/rotate-secret`, {
      method: 'POST',
      token,
      json: { overlap: '1h' },
    });
    const { signingSecret } = (await rotate.json()) as RotateSecretResult;
    expect(signingSecret).not.toBe(registration.signingSecret);
    const before = handled.length;
    await patchProperty(api, token, propertyId, { name: 'Lindenhof West' });
    await eventually(() => handled.length === before + 1, { what: 'the delivery signed twice' });
    expect(handled.at(-1)?.delivery.entity.name).toBe('Lindenhof West');
  });
});
