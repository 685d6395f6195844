import { enqueueEntityChange, notifyWebhookDue } from '@platform/db';
import { WebhookState } from '@platform/shared';
import {
  createTestDatabase,
  type DispatcherProcess,
  eventually,
  propertyChange,
  seedParty,
  seedRegistration,
  startDispatcher,
  startTestTarget,
  type TestDatabase,
  type TestTarget,
  truncateWebhooks,
} from '@platform/testkit';

const { Created, Successful } = WebhookState;
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';

// Crash safety, shutdown and several replicas, proven with real dispatcher processes against a
// real Postgres and a real HTTP target on 127.0.0.1.

/** A dispatcher process that names itself in its leases (`DISPATCHER_ID`). */
interface Replica extends DispatcherProcess {
  id: string;
  /** Successful deliveries this replica counted (`dispatcher_deliveries_total{outcome="success"}`). */
  successes(): Promise<number>;
}

const replicas: Replica[] = [];

/**
 * Starts a dispatcher process and resolves once it reports healthy. It runs as
 * `node --import tsx`, so a SIGKILL hits the dispatcher itself, not a wrapper.
 */
async function startReplica(
  databaseUrl: string,
  id: string,
  env: Record<string, string> = {},
): Promise<Replica> {
  const dispatcher = await startDispatcher(databaseUrl, {
    LOG_LEVEL: 'info',
    DISPATCHER_ID: id,
    DISPATCHER_POLL_INTERVAL: '500ms',
    ...env,
  });
  const replica: Replica = {
    ...dispatcher,
    id,
    successes: async () => {
      const text = await (await fetch(`http://127.0.0.1:${dispatcher.port}/metrics`)).text();
      return Number(/^dispatcher_deliveries_total\{outcome="success"\} (\d+)$/m.exec(text)?.[1] ?? NaN);
    },
  };
  replicas.push(replica);
  return replica;
}

let db: TestDatabase;
let target: TestTarget;
let partyId: number;
let registrationId: number;

/** Enqueues `count` changes in one transaction (one NOTIFY), as a bulk write would; answers the webhook ids. */
async function seedBacklog(count: number): Promise<number[]> {
  return db.knex.transaction(async (trx) => {
    for (let i = 1; i <= count; i++) await enqueueEntityChange(trx, propertyChange(partyId, i));
    await notifyWebhookDue(trx);
    return trx('webhooks').where({ registration_id: registrationId }).orderBy('id').pluck('id');
  });
}

const statesOf = async (ids: number[]) =>
  db.knex('webhooks').whereIn('id', ids).orderBy('id').select('id', 'state', 'attempt_count', 'locked_by');

/** How often the target saw each webhook id. */
function receipts(): Map<number, number> {
  const counts = new Map<number, number>();
  for (const request of target.requests) {
    const id = Number(request.webhookId);
    counts.set(id, (counts.get(id) ?? 0) + 1);
  }
  return counts;
}

beforeAll(async () => {
  db = await createTestDatabase();
  partyId = await seedParty(db.knex);
});
afterAll(() => db.drop());
beforeEach(async () => {
  // the registrations too: a change fans out to every registration of the party
  await truncateWebhooks(db.knex);
  target = await startTestTarget();
  ({ id: registrationId } = await seedRegistration(db.knex, { partyId, targetUrl: target.url }));
});
afterEach(async () => {
  for (const replica of replicas.splice(0)) {
    if (replica.process.exitCode === null && replica.process.signalCode === null)
      replica.process.kill('SIGKILL');
    await replica.exited;
  }
  await target.close();
});

describe('several dispatchers', () => {
  it('drain one backlog together, delivering every webhook exactly once', { timeout: 120_000 }, async () => {
    // a short pause per answer keeps both replicas busy at once rather than one draining alone
    target.script = () => ({ delayMs: 5 });
    const settings = { DISPATCHER_BATCH_SIZE: '25', DISPATCHER_CONCURRENCY: '16' };
    const [a, b] = await Promise.all([
      startReplica(db.url, 'replica-a', settings),
      startReplica(db.url, 'replica-b', settings),
    ]);
    const ids = await seedBacklog(2000);
    expect(ids).toHaveLength(2000);

    await eventually(
      async () => (await db.knex('webhooks').where({ state: Successful }).count({ n: '*' }))[0]!.n === 2000,
      {
        timeoutMs: 90_000,
        what: '2,000 webhooks Successful',
      },
    );
    // no webhook reached the target twice, and each reached it
    const seen = receipts();
    expect(target.requests).toHaveLength(2000);
    expect([...seen.keys()].sort((x, y) => x - y)).toEqual(ids);
    // one attempt each, the first
    const attempts = await db
      .knex('webhook_attempts')
      .select(
        db.knex.raw('count(*)::int as n, count(distinct webhook_id)::int as webhooks, max(number) as max'),
      );
    expect(attempts).toEqual([{ n: 2000, webhooks: 2000, max: 1 }]);
    expect(
      await db.knex('webhooks').where({ attempt_count: 1, state: Successful }).count({ n: '*' }),
    ).toEqual([{ n: 2000 }]);
    // both took part, and between them counted every delivery
    await eventually(async () => (await a.successes()) + (await b.successes()) === 2000, {
      what: 'metrics caught up',
    });
    expect(await a.successes()).toBeGreaterThan(0);
    expect(await b.successes()).toBeGreaterThan(0);
  });

  it(
    'lose nothing when one is killed mid-batch: what it held is recorded interrupted and retried per schedule',
    { timeout: 120_000 },
    async () => {
      // answers take a while, so the batch is in flight when the kill comes; a target starts at
      // 8 deliveries in flight (its adaptive limit's start), so the batch is 8
      target.script = () => ({ delayMs: 1500 });
      const settings = {
        DISPATCHER_BATCH_SIZE: '8',
        DISPATCHER_CONCURRENCY: '8',
        WEBHOOK_TIMEOUT: '2s',
        DISPATCHER_LEASE: '3s',
        WEBHOOK_RETRY_SCHEDULE: '0s,1s,1s,1s,1s,1s,1s',
      };
      const victim = await startReplica(db.url, 'victim', settings);
      const ids = await seedBacklog(40);
      await eventually(() => target.requests.length >= 8, { what: 'a batch in flight' });
      victim.process.kill('SIGKILL');
      await victim.exited;
      const inFlightAtKill = new Set(target.requests.map((r) => Number(r.webhookId)));
      expect(inFlightAtKill.size).toBe(8);
      // what the victim had claimed is still leased to it: the batch in flight, and the rows it
      // had buffered for the next free slots (at most as many again); nothing was recorded
      const leased = new Set((await statesOf(ids)).filter((w) => w.locked_by === 'victim').map((w) => w.id));
      for (const id of inFlightAtKill) expect(leased.has(id)).toBe(true);
      expect(leased.size).toBeLessThanOrEqual(16);
      expect(await db.knex('webhook_attempts').count({ n: '*' })).toEqual([{ n: 0 }]);

      target.script = () => ({});
      await startReplica(db.url, 'survivor', settings);
      await eventually(
        async () => (await db.knex('webhooks').where({ state: Successful }).count({ n: '*' }))[0]!.n === 40,
        {
          timeoutMs: 60_000,
          what: 'every webhook Successful',
        },
      );

      const seen = receipts();
      expect([...seen.keys()].sort((x, y) => x - y)).toEqual(ids);
      for (const [id, count] of seen) {
        // a duplicate only for what was in flight at the kill, and only once
        expect(count, `webhook ${id}`).toBe(inFlightAtKill.has(id) ? 2 : 1);
      }
      // every counted try has its attempt row: the victim's tries (in flight or buffered) are
      // recorded as interrupted once their lease ran out, sending nothing, and the next attempt
      // waited the schedule's step after that
      const attempts = await db
        .knex('webhook_attempts')
        .orderBy(['webhook_id', 'number'])
        .select('webhook_id', 'number', 'status_code', 'error_kind', 'started_at', 'duration_ms');
      expect(attempts).toHaveLength(40 + leased.size);
      for (const id of ids) {
        const mine = attempts.filter((a) => a.webhook_id === id);
        expect(
          mine.map((a) => [a.number, a.status_code, a.error_kind]),
          `webhook ${id}`,
        ).toEqual(
          leased.has(id)
            ? [
                [1, null, 'interrupted'],
                [2, 200, null],
              ]
            : [[1, 200, null]],
        );
        if (leased.has(id)) {
          expect(mine[1]!.started_at.getTime() - mine[0]!.started_at.getTime()).toBeGreaterThanOrEqual(
            1000 - 5,
          );
        }
      }
      for (const webhook of await statesOf(ids)) {
        expect(webhook.attempt_count).toBe(leased.has(webhook.id) ? 2 : 1);
      }
      // the interrupted tries came after the victim's lease had run out
      for (const id of inFlightAtKill) {
        const interrupted = attempts.find((a) => a.webhook_id === id && a.number === 1)!;
        expect(interrupted.started_at.getTime()).toBeGreaterThanOrEqual(
          target.requestsFor(id)[0]!.receivedAt,
        );
        const again = target.requestsFor(id)[1]!;
        expect(again.receivedAt - target.requestsFor(id)[0]!.receivedAt).toBeGreaterThanOrEqual(2000 + 1000);
      }
    },
  );
  it(
    'record a try cut short on its last attempt as interrupted and end the webhook Failed: never an eighth attempt',
    { timeout: 60_000 },
    async () => {
      // six 500s, then the seventh try hangs until the kill
      target.script = (request) => (request.index <= 6 ? { status: 500 } : { hang: true });
      const settings = {
        WEBHOOK_TIMEOUT: '2s',
        DISPATCHER_LEASE: '3s',
        WEBHOOK_RETRY_SCHEDULE: '0ms,100ms,100ms,100ms,100ms,100ms,100ms',
        // six failures in a row at one target: the breaker (breaker.test.ts) must not step in
        DISPATCHER_BREAKER_FAILURES: '10',
      };
      const victim = await startReplica(db.url, 'victim', settings);
      const [id] = await seedBacklog(1);
      await eventually(() => target.requests.length === 7, { what: 'the seventh try in flight' });
      victim.process.kill('SIGKILL');
      await victim.exited;
      expect(await statesOf([id!])).toEqual([
        { id, state: WebhookState.Retrying, attempt_count: 7, locked_by: 'victim' },
      ]);

      await startReplica(db.url, 'survivor', settings);
      await eventually(async () => (await statesOf([id!]))[0]!.state === WebhookState.Failed, {
        what: 'the webhook Failed',
      });
      const attempts = await db
        .knex('webhook_attempts')
        .where({ webhook_id: id })
        .orderBy('number')
        .select('number', 'status_code', 'error_kind');
      expect(attempts).toEqual([
        ...[1, 2, 3, 4, 5, 6].map((number) => ({ number, status_code: 500, error_kind: 'status' })),
        { number: 7, status_code: null, error_kind: 'interrupted' },
      ]);
      expect(await statesOf([id!])).toEqual([
        { id, state: WebhookState.Failed, attempt_count: 7, locked_by: null },
      ]);
      expect(target.requests).toHaveLength(7);
    },
  );
});

describe('claiming ahead', () => {
  it(
    'never starts a buffered delivery that could outlive its lease: it hands the row back and claims it afresh',
    { timeout: 60_000 },
    async () => {
      // one slot, answers of 1.8 s: the second webhook waits in the buffer while the first is
      // delivered, longer than (lease − timeout) / 2 = 0.5 s allows
      const leaseLeft: number[] = [];
      target.script = async (request) => {
        const { next_attempt_at } = await db
          .knex('webhooks')
          .where({ id: Number(request.webhookId) })
          .first('next_attempt_at');
        leaseLeft.push((next_attempt_at as Date).getTime() - request.receivedAt);
        return { delayMs: 1800 };
      };
      await startReplica(db.url, 'patient', {
        DISPATCHER_CONCURRENCY: '1',
        WEBHOOK_TIMEOUT: '2s',
        DISPATCHER_LEASE: '3s',
      });
      const ids = await seedBacklog(3);
      await eventually(async () => (await statesOf(ids)).every((w) => w.state === Successful), {
        timeoutMs: 30_000,
        what: 'three webhooks Successful',
      });
      // each delivered once, as its first attempt, and each had at least the timeout of lease left
      // when it reached the target (the first one's claim had 3 s; a buffered one launched 1.8 s
      // after its claim would have had 1.2 s)
      expect([...receipts().values()]).toEqual([1, 1, 1]);
      expect((await statesOf(ids)).map((w) => w.attempt_count)).toEqual([1, 1, 1]);
      expect(leaseLeft).toHaveLength(3);
      for (const left of leaseLeft) expect(left).toBeGreaterThanOrEqual(2000 - 100);
    },
  );
});

describe('SIGTERM', () => {
  it(
    'stops claiming, finishes the deliveries in flight, records them, and exits 0',
    { timeout: 60_000 },
    async () => {
      // a target starts at 8 deliveries in flight (its adaptive limit's start): a batch of 8
      target.script = () => ({ delayMs: 1500 });
      const replica = await startReplica(db.url, 'terminated', {
        DISPATCHER_BATCH_SIZE: '8',
        DISPATCHER_CONCURRENCY: '8',
        DISPATCHER_SHUTDOWN_TIMEOUT: '10s',
      });
      const ids = await seedBacklog(30);
      await eventually(() => target.requests.length >= 8, { what: 'a batch in flight' });
      replica.process.kill('SIGTERM');
      expect(await replica.exited).toBe(0);

      const delivered = new Set(target.requests.map((r) => Number(r.webhookId)));
      expect(delivered.size).toBe(8);
      expect(target.requests).toHaveLength(8); // nothing claimed after the signal
      for (const webhook of await statesOf(ids)) {
        if (delivered.has(webhook.id)) {
          expect(webhook).toMatchObject({ state: Successful, attempt_count: 1, locked_by: null });
        } else {
          expect(webhook).toMatchObject({ state: Created, attempt_count: 0, locked_by: null });
        }
      }
      const attempts = await db
        .knex('webhook_attempts')
        .orderBy('webhook_id')
        .select('webhook_id', 'number', 'status_code');
      expect(attempts).toEqual(
        [...delivered].sort((x, y) => x - y).map((id) => ({ webhook_id: id, number: 1, status_code: 200 })),
      );
      expect(replica.logs.map((l) => l.msg)).toEqual(expect.arrayContaining(['stopping', 'stopped']));
    },
  );

  it(
    'exits 0 at the shutdown deadline, leaving deliveries that outlast it to their lease',
    { timeout: 60_000 },
    async () => {
      target.script = () => ({ hang: true });
      const replica = await startReplica(db.url, 'impatient', {
        WEBHOOK_TIMEOUT: '20s',
        DISPATCHER_SHUTDOWN_TIMEOUT: '1s',
      });
      const ids = await seedBacklog(3);
      await eventually(() => target.requests.length === 3, { what: 'three deliveries in flight' });
      replica.process.kill('SIGTERM');
      expect(await replica.exited).toBe(0);
      expect(replica.logs).toContainEqual(
        expect.objectContaining({
          msg: 'deliveries still in flight at the shutdown deadline; left to their lease',
          abandoned: 3,
        }),
      );
      // still leased: once the lease runs out, the next claim records each try as interrupted
      // and retries it per schedule (the kill test above)
      for (const webhook of await statesOf(ids)) {
        expect(webhook).toMatchObject({ state: Created, attempt_count: 1, locked_by: 'impatient' });
      }
      expect(await db.knex('webhook_attempts').count({ n: '*' })).toEqual([{ n: 0 }]);
    },
  );
});
