import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { WebhookState, type WebhookOperationRead } from '@platform/shared';
import {
  createTestDatabase,
  eventually,
  freePort,
  seedBacklog,
  seedParty,
  seedRegistration,
  spawnNode,
  TEST_SECRET_KEY,
  waitForHealthy,
  type NodeProcess,
  type TestDatabase,
} from '@platform/testkit';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildAccount } from '../../../tests/support/api';

/**
 * Bulk operations at scale, on the real API process: 100,000 webhooks retried, then resolved and
 * aborted by filter, in batches; the API is killed (SIGKILL) in the middle of the retry and a new
 * one resumes it. No webhook is ever half-changed: at the kill, exactly the webhooks of the
 * committed batches have changed, each completely.
 */
const COUNT = 100_000;
const HALF = COUNT / 2;

let db: TestDatabase;
let dataDir: string;
let port: number;
let api: NodeProcess | undefined;
let token: string;
let registrationId: number;

/** The real API (TypeScript source) on `port`, its operations leased for 2 s. */
async function startApi(): Promise<NodeProcess> {
  const child = spawnNode('apps/api/src/main.ts', {
    label: 'api',
    env: {
      NODE_ENV: 'test',
      LOG_LEVEL: 'warn',
      DATABASE_URL: db.url,
      API_PORT: String(port),
      DATA_DIR: dataDir,
      SECRET_ENCRYPTION_KEY: TEST_SECRET_KEY.toString('base64'),
      WEBHOOK_OPERATION_BATCH: '1000',
      WEBHOOK_OPERATION_LEASE: '2s',
    },
  });
  await waitForHealthy(`http://127.0.0.1:${port}/healthz`, child);
  return child;
}

const call = (path: string, init: { method?: string; json?: unknown } = {}) =>
  fetch(`http://127.0.0.1:${port}${path}`, {
    method: init.method ?? 'GET',
    headers: {
      authorization: `Bearer ${token}`,
      ...(init.json === undefined ? {} : { 'content-type': 'application/json' }),
    },
    body: init.json === undefined ? undefined : JSON.stringify(init.json),
  });

async function start(body: unknown): Promise<WebhookOperationRead> {
  const response = await call('/api/webhooks/bulk', { method: 'POST', json: body });
  expect(response.status, await response.clone().text()).toBe(202);
  return (await response.json()) as WebhookOperationRead;
}

const read = async (id: number) =>
  (await (await call(`/api/webhook-operations/${id}`)).json()) as WebhookOperationRead;

async function finished(id: number): Promise<WebhookOperationRead> {
  let last: WebhookOperationRead | undefined;
  await eventually(async () => (last = await read(id)).state !== 'running', {
    timeoutMs: 240_000,
    what: `operation ${id} finishing`,
    watch: api,
  });
  return last!;
}

const countBy = async () =>
  Object.fromEntries(
    (
      (await db
        .knex('webhooks')
        .where({ registration_id: registrationId })
        .groupBy('state', 'attempt_count')
        .select('state', 'attempt_count', db.knex.raw('count(*)::int as n'))) as {
        state: number;
        attempt_count: number;
        n: number;
      }[]
    ).map((row) => [`${row.state}/${row.attempt_count}`, row.n]),
  );

beforeAll(async () => {
  db = await createTestDatabase();
  dataDir = mkdtempSync(join(tmpdir(), 'api-scale-'));
  port = await freePort();
  const partyId = await seedParty(db.knex);
  await db.knex('parties').where({ id: partyId }).update({ type: 2 });
  const account = await buildAccount({ knex: db.knex }, { partyId });
  ({ id: registrationId } = await seedRegistration(db.knex, {
    partyId,
    targetUrl: 'https://hooks.example.com/x',
  }));
  const eventId = (
    await db.knex('webhook_events').where({ registration_id: registrationId, type: 2 }).first('id')
  ).id;
  await seedBacklog(db.knex, { partyId, registrationId, eventId }, COUNT);
  // every one Failed after its 7 attempts; the first half created a day earlier
  await db.knex('webhooks').update({ state: WebhookState.Failed, attempt_count: 7 });
  await db
    .knex('webhooks')
    .where('id', '<=', HALF)
    .update({ created: db.knex.raw(`created - interval '1 day'`) });
  api = await startApi();
  const login = await fetch(`http://127.0.0.1:${port}/api/auth/login`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ email: account.email, password: 'Test-Password-1!' }),
  });
  token = ((await login.json()) as { accessToken: string }).accessToken;
}, 120_000);

afterAll(async () => {
  await api?.stop();
  await db?.drop();
  rmSync(dataDir, { recursive: true, force: true });
});

describe('bulk operations over 100,000 webhooks', () => {
  it('retry survives the API killed mid-way, and resolve and abort by filter finish; none half-changed', async () => {
    const retry = await start({
      action: 'retry',
      filter: { registrationId, states: [WebhookState.Failed] },
      freshSchedule: true,
    });
    expect(retry).toMatchObject({ state: 'running', total: COUNT });

    // kill it once some batches have committed
    await eventually(async () => (await read(retry.id)).done >= 5_000, { timeoutMs: 120_000, watch: api });
    api!.process.kill('SIGKILL');
    await api!.exited;
    const atKill = (await db.knex('webhook_operations').where({ id: retry.id }).first()) as {
      done: number;
      changed: number;
      state: string;
    };
    expect(atKill.state).toBe('running');
    expect(atKill.done).toBeLessThan(COUNT);
    // exactly the committed batches changed, each webhook completely (state, schedule, last action)
    expect(await countBy()).toEqual({
      [`${WebhookState.Retrying}/0`]: atKill.changed,
      [`${WebhookState.Failed}/7`]: COUNT - atKill.changed,
    });
    expect(
      await db
        .knex('webhooks')
        .where({ state: WebhookState.Retrying })
        .whereNull('last_action_id')
        .count({ n: '*' }),
    ).toEqual([{ n: 0 }]);

    // a new API process resumes it once the dead one's lease ran out
    api = await startApi();
    const resumed = await finished(retry.id);
    expect(resumed).toMatchObject({ state: 'done', total: COUNT, done: COUNT, changed: COUNT, skipped: {} });
    expect(await countBy()).toEqual({ [`${WebhookState.Retrying}/0`]: COUNT });

    // a dry run of everything changes nothing
    const dry = await finished(
      (await start({ action: 'abort', filter: { registrationId }, dryRun: true })).id,
    );
    expect(dry).toMatchObject({ state: 'done', total: COUNT, changed: COUNT });
    expect(await countBy()).toEqual({ [`${WebhookState.Retrying}/0`]: COUNT });

    // resolve the older half, abort the newer half, by creation time
    const split = (
      await db
        .knex('webhooks')
        .where('id', HALF + 1)
        .first('created')
    ).created.toISOString() as string;
    const [resolved, aborted] = await Promise.all([
      start({ action: 'resolve', filter: { registrationId, createdBefore: split } }),
      start({ action: 'abort', filter: { registrationId, createdFrom: split } }),
    ]);
    expect(resolved.total).toBe(HALF);
    expect(aborted.total).toBe(HALF);
    expect(await finished(resolved.id)).toMatchObject({ state: 'done', changed: HALF });
    expect(await finished(aborted.id)).toMatchObject({ state: 'done', changed: HALF });
    expect(await countBy()).toEqual({
      [`${WebhookState.Resolved}/0`]: HALF,
      [`${WebhookState.Aborted}/0`]: HALF,
    });
    const audit = await db.knex('operator_actions').orderBy('id').select('action', 'changed', 'dry_run');
    expect(audit).toEqual([
      { action: 'webhooks.bulk-retry', changed: COUNT, dry_run: false },
      { action: 'webhooks.bulk-abort', changed: COUNT, dry_run: true },
      expect.objectContaining({ changed: HALF }),
      expect.objectContaining({ changed: HALF }),
    ]);
  }, 600_000);
});
