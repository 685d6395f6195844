import { PartyType, WebhookState } from '@platform/shared';
import {
  bodyOf,
  createTestDatabase,
  eventually,
  pgBouncerPath,
  startApi,
  startDispatcher,
  startPgBouncer,
  startTestTarget,
  waitForWebhook,
  type ApiProcess,
  type DispatcherProcess,
  type PgBouncer,
  type TestDatabase,
  type TestTarget,
} from '@platform/testkit';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildAccount, buildParty, TEST_PASSWORD } from '../tests/support/api';

// The API behind PgBouncer in transaction pooling and the dispatcher behind it in session pooling
// (docs/dispatcher.md › Behind PgBouncer): Debian's pgbouncer, started here with a config of its
// own in front of the test database server (the binary must be installed: the file fails if not).
describe('behind PgBouncer', () => {
  let db: TestDatabase;
  let bouncer: PgBouncer;
  let target: TestTarget;
  let api: ApiProcess;
  let dispatcher: DispatcherProcess;
  let email: string;

  beforeAll(async () => {
    db = await createTestDatabase();
    const name = new URL(db.url).pathname.slice(1);
    bouncer = await startPgBouncer(pgBouncerPath(), db.url, [name]);
    target = await startTestTarget();
    const party = await buildParty({ knex: db.knex }, { type: PartyType.PropertyManagementCompany });
    ({ email } = await buildAccount({ knex: db.knex }, { partyId: party.id }));
    api = await startApi(bouncer.url(name, 'transaction'), { ALLOW_PRIVATE_TARGETS: 'true' });
    dispatcher = await startDispatcher(bouncer.url(name, 'session'), {
      LOG_LEVEL: 'info',
      // only a NOTIFY through the LISTEN connection wakes it within this test
      DISPATCHER_POLL_INTERVAL: '1h',
      // the maintenance jobs' session advisory lock, taken every second
      DISPATCHER_REPAIR_SCHEDULE: '* * * * * *',
    });
  });

  afterAll(async () => {
    await dispatcher?.stop();
    await api?.stop();
    await target?.close();
    await bouncer?.stop();
    await db?.drop();
  });

  const call = async (method: string, path: string, token: string, json?: unknown) => {
    const response = await fetch(`${api.url}${path}`, {
      method,
      headers: {
        authorization: `Bearer ${token}`,
        ...(json === undefined ? {} : { 'content-type': 'application/json' }),
      },
      ...(json === undefined ? {} : { body: JSON.stringify(json) }),
    });
    return { status: response.status, body: (await response.json()) as Record<string, unknown> };
  };

  it('logs in, creates, lists and PATCHes through transaction pooling; the dispatcher delivers through session pooling', async () => {
    const login = await fetch(`${api.url}/api/auth/login`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ email, password: TEST_PASSWORD }),
    });
    expect(login.status).toBe(200);
    const { accessToken: token } = (await login.json()) as { accessToken: string };

    const registration = await call('POST', '/api/webhook-registrations', token, {
      targetUrl: target.url,
      enabledEvents: [{ entityName: 'Property', type: 2 }],
      targetAuthorization: { type: 0 },
    });
    expect(registration.status).toBe(200);
    const created = await call('POST', '/api/properties', token, {
      name: 'Pooled property',
      street: 'Poolstraße',
      postalCode: '10115',
      city: 'Berlin',
    });
    expect(created.status).toBe(200);
    const list = await call('GET', '/api/properties?PageSize=20', token);
    expect(list.status).toBe(200);
    expect(JSON.stringify(list.body)).toContain('Pooled property');

    const patched = await call('PATCH', `/api/properties/${created.body.id}`, token, {
      notes: 'written through pgbouncer',
    });
    expect(patched.status).toBe(200);
    const [webhook] = await db.knex('webhooks').where({ registration_id: registration.body.id }).select('id');
    expect(webhook).toBeDefined();

    const [delivery] = await target.waitForAnswered(webhook.id, 1, 15_000);
    expect(bodyOf(delivery!).entity.notes).toBe('written through pgbouncer');
    await waitForWebhook(db.knex, webhook.id, WebhookState.Successful, { attempts: 1 });
  });

  it('warns that the session settings the pooler dropped are not in effect', () => {
    const warning = dispatcher.logs.find((line) =>
      String(line.msg).startsWith('session settings not in effect'),
    );
    // the server's default is synchronous_commit=on; jit's default depends on the build
    expect(warning?.missing).toContain('synchronous_commit=off');
  });

  it("runs the dispatcher's maintenance jobs under their session advisory lock through session pooling", async () => {
    const runs = async (result: string) => {
      const text = await (await fetch(`http://127.0.0.1:${dispatcher.port}/metrics`)).text();
      const line = new RegExp(
        `^dispatcher_maintenance_runs_total\\{job="repair",result="${result}"\\} (\\d+)$`,
        'm',
      );
      return Number(line.exec(text)?.[1] ?? 0);
    };
    await eventually(async () => (await runs('done')) >= 2, { timeoutMs: 10_000, what: 'two repair runs' });
    expect(await runs('failed')).toBe(0);
  });
});
