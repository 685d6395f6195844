import {
  enqueueEntityChange,
  ensurePartitions,
  listPartitions,
  partyBucket,
  registrationBucket,
  type PartitionedTable,
} from '@platform/db';
import { WebhookState } from '@platform/shared';
import {
  createTestDatabase,
  eventually,
  seedParty,
  setWebhookState,
  type TestDatabase,
} from '@platform/testkit';
import { randomUUID } from 'node:crypto';
import pg from 'pg';
import pino from 'pino';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { loadConfig } from './config';
import { Maintenance, MAINTENANCE_JOBS, type MaintenanceOptions } from './maintenance';

const DAY = 86_400_000;
const { Created, Successful, Failed, Aborted, Pending, Resolved } = WebhookState;

let db: TestDatabase;
let partyId: number;
let registrationId: number;
let eventId: number;
const logs: Record<string, unknown>[] = [];
const logger = pino({ level: 'debug' }, { write: (line: string) => void logs.push(JSON.parse(line)) });

const daysAgo = (days: number) => new Date(Date.now() - days * DAY);

function maintenance(overrides: Partial<MaintenanceOptions> = {}): Maintenance {
  return new Maintenance({
    knex: db.knex,
    connectionString: db.url,
    logger,
    // far away: the tests run the jobs themselves unless they test the schedule
    pruneSchedule: '0 0 1 1 *',
    repairSchedule: '0 0 1 1 *',
    webhookRetentionMs: 30 * DAY,
    attemptRetentionMs: 30 * DAY,
    ...overrides,
  });
}

let serial = 0;
/**
 * An id of the partition of `created`'s UTC day in `table` (made if missing), as a row written
 * that day would have had: the day's partition holds the ids of its range.
 */
async function idOfDay(table: PartitionedTable, created: Date): Promise<number> {
  const day = created.toISOString().slice(0, 10);
  await ensurePartitions(db.knex, table, { day });
  const { rows } = await db.knex.raw(`select time_partition_start(?::date) + ? as id`, [day, ++serial]);
  return Number(rows[0].id);
}

const partitionOf = (table: PartitionedTable, created: Date) =>
  `${table}_${created.toISOString().slice(0, 10).replaceAll('-', '')}`;

async function partitions(table: PartitionedTable): Promise<string[]> {
  return (await listPartitions(db.knex, table)).map((p) => p.name);
}

async function change(created: Date): Promise<number> {
  const [row] = await db
    .knex('entity_changes')
    .insert({
      id: await idOfDay('entity_changes', created),
      entity_name: 'Unit',
      type: 2,
      entity_id: 1,
      entity: {},
      initiator_party_id: partyId,
      created,
    })
    .returning('id');
  return row.id;
}

async function webhook(options: {
  state: WebhookState;
  created: Date;
  completedAt?: Date | null;
  changeId?: number;
  attempts?: Date[];
}): Promise<number> {
  const [row] = await db
    .knex('webhooks')
    .insert({
      registration_id: registrationId,
      bucket: registrationBucket(db.knex, registrationId),
      event_id: eventId,
      entity_change_id: options.changeId ?? (await change(options.created)),
      state: options.state,
      created: options.created,
      completed_at: options.completedAt ?? null,
    })
    .returning('id');
  for (const [i, created] of (options.attempts ?? []).entries()) {
    await db.knex('webhook_attempts').insert({
      id: await idOfDay('webhook_attempts', created),
      webhook_id: row.id,
      number: i + 1,
      started_at: created,
      duration_ms: 5,
      status_code: 200,
      created,
    });
  }
  return row.id;
}

/** Holds a job's advisory lock on a session of its own, as another replica running it would. */
async function holdJobLock(job: keyof typeof MAINTENANCE_JOBS): Promise<() => Promise<void>> {
  const client = new pg.Client({ connectionString: db.url });
  await client.connect();
  await client.query(`select pg_advisory_lock(hashtext('platform.dispatcher-maintenance'), $1)`, [
    MAINTENANCE_JOBS[job],
  ]);
  return () => client.end();
}

async function strandedGroup(): Promise<{ promotable: number }> {
  const [registration] = await db
    .knex('webhook_registrations')
    .insert({
      party_id: partyId,
      bucket: partyBucket(db.knex, partyId),
      target_url: 'http://127.0.0.1:9/hook',
      should_group: true,
      signing_secret: 'x',
    })
    .returning(['id', 'bucket']);
  await db
    .knex('webhook_events')
    .insert({ registration_id: registration.id, bucket: registration.bucket, entity_name: 'Unit', type: 2 });
  for (let i = 0; i < 3; i++) {
    await db.knex.transaction((trx) =>
      enqueueEntityChange(trx, {
        entityName: 'Unit',
        type: 2,
        entityId: 9,
        entity: {},
        initiatorPartyId: partyId,
        initiatorAccountId: null,
      }),
    );
  }
  // the head ends without releasing its group: nothing would ever promote the next one
  const [head] = await db
    .knex('webhooks')
    .where({ registration_id: registration.id, group_seq: 1 })
    .pluck<number[]>('id');
  await setWebhookState(db.knex, head!, Successful);
  const [next] = await db
    .knex('webhooks')
    .where({ registration_id: registration.id, group_seq: 2 })
    .select('id');
  return { promotable: next.id };
}

beforeAll(async () => {
  db = await createTestDatabase();
  partyId = await seedParty(db.knex);
  [{ id: registrationId }] = await db
    .knex('webhook_registrations')
    .insert({
      party_id: partyId,
      bucket: partyBucket(db.knex, partyId),
      target_url: 'http://127.0.0.1:9/hook',
      signing_secret: 'x',
    })
    .returning('id');
  [{ id: eventId }] = await db
    .knex('webhook_events')
    .insert({
      registration_id: registrationId,
      bucket: registrationBucket(db.knex, registrationId),
      entity_name: 'Unit',
      type: 2,
    })
    .returning('id');
});
afterAll(() => db.drop());
beforeEach(async () => {
  logs.length = 0;
  await db.knex.raw(
    'truncate webhook_attempt_stats, webhook_attempts, webhooks, webhook_groups, entity_changes cascade',
  );
  await db.knex('webhook_events').whereNot({ registration_id: registrationId }).delete();
  await db.knex('webhook_registrations').whereNot({ id: registrationId }).delete();
});

describe('the prune job', () => {
  it('drops the partitions of old attempts and changes, deletes finished webhooks, and keeps the rest', async () => {
    const keep: Record<string, number> = {};
    const doomed: Record<string, number> = {};
    // oldest first, as ids grow with time
    doomed.successful = await webhook({
      state: Successful,
      created: daysAgo(40),
      completedAt: daysAgo(40),
      attempts: [daysAgo(40)],
    });
    doomed.aborted = await webhook({ state: Aborted, created: daysAgo(39), completedAt: daysAgo(38) });
    doomed.resolved = await webhook({ state: Resolved, created: daysAgo(38), completedAt: daysAgo(35) });
    // Failed waits for an operator, however old; its old attempts go, the row stays, and so does
    // the partition of its change
    keep.failed = await webhook({
      state: Failed,
      created: daysAgo(37),
      completedAt: daysAgo(36),
      attempts: [daysAgo(37), daysAgo(36)],
    });
    keep.pendingOld = await webhook({ state: Pending, created: daysAgo(36) });
    // old, but completed within the retention
    keep.lateSuccess = await webhook({
      state: Successful,
      created: daysAgo(33),
      completedAt: daysAgo(10),
      attempts: [daysAgo(31), daysAgo(10)],
    });
    for (let i = 0; i < 5; i++)
      doomed[`bulk${i}`] = await webhook({
        state: Successful,
        created: daysAgo(32),
        completedAt: daysAgo(32),
      });
    const orphan = await change(daysAgo(31)); // no registration subscribed to it
    keep.recent = await webhook({
      state: Successful,
      created: daysAgo(1),
      completedAt: daysAgo(1),
      attempts: [daysAgo(1)],
    });
    const recentOrphan = await change(daysAgo(1));
    // the dropped partitions' rows are counted by the planner's statistics
    await db.knex.raw('analyze webhook_attempts, entity_changes');

    const reports: unknown[] = [];
    const job = maintenance({ pruneBatch: 2, onRun: (...args) => reports.push(args) });
    const report = (await job.prune())!;
    expect(report).toMatchObject({ attempts: 4, attemptStats: 0, webhooks: 8, entityChanges: 9 });
    expect(reports).toEqual([['prune', 'done', report]]);
    expect(report.partitions.pinned).toEqual(
      [37, 36, 33].map((days) => ({ partition: partitionOf('entity_changes', daysAgo(days)), webhooks: 1 })),
    );
    expect(report.partitions.busy).toEqual([]);

    const webhooks = await db.knex('webhooks').orderBy('id').pluck('id');
    expect(webhooks).toEqual(Object.values(keep).sort((a, b) => a - b));
    const attempts = await db.knex('webhook_attempts').orderBy('id').select('webhook_id', 'number');
    expect(attempts).toEqual([
      { webhook_id: keep.lateSuccess, number: 2 },
      { webhook_id: keep.recent, number: 1 },
    ]);
    const attemptPartitions = await partitions('webhook_attempts');
    for (const days of [40, 37, 36, 31]) {
      expect(report.partitions.dropped).toContain(partitionOf('webhook_attempts', daysAgo(days)));
      expect(attemptPartitions).not.toContain(partitionOf('webhook_attempts', daysAgo(days)));
    }
    expect(attemptPartitions).toEqual(
      expect.arrayContaining([10, 1, 0].map((days) => partitionOf('webhook_attempts', daysAgo(days)))),
    );
    const changePartitions = await partitions('entity_changes');
    for (const days of [40, 39, 38, 32, 31]) {
      expect(changePartitions).not.toContain(partitionOf('entity_changes', daysAgo(days)));
    }
    const changes = await db.knex('entity_changes').pluck('id');
    expect(changes).not.toContain(orphan);
    expect(changes).toContain(recentOrphan);
    // every kept webhook keeps its change
    expect(await db.knex('webhooks').whereNotIn('entity_change_id', changes).count({ n: '*' })).toEqual([
      { n: 0 },
    ]);

    // nothing left to do but what is pinned
    expect(await job.prune()).toMatchObject({
      attempts: 0,
      attemptStats: 0,
      webhooks: 0,
      entityChanges: 0,
      partitions: { created: [], dropped: [], pinned: report.partitions.pinned },
    });
    expect(logs.filter((l) => l.msg === 'maintenance done' && l.job === 'prune')).toHaveLength(2);

    // an operator resolves the Failed webhook: once the retention lets it go, its day goes with it
    await setWebhookState(db.knex, keep.failed!, Resolved);
    await db
      .knex('webhooks')
      .where({ id: keep.failed })
      .update({ completed_at: daysAgo(31) });
    expect((await job.prune())!.partitions.dropped).toEqual([partitionOf('entity_changes', daysAgo(37))]);
  });

  it('honours the configured retention periods', async () => {
    const finished = await webhook({
      state: Successful,
      created: daysAgo(5),
      completedAt: daysAgo(5),
      attempts: [daysAgo(5)],
    });
    await db.knex.raw('analyze webhook_attempts, entity_changes');
    expect(await maintenance().prune()).toMatchObject({
      attempts: 0,
      attemptStats: 0,
      webhooks: 0,
      entityChanges: 0,
    });
    expect(
      await maintenance({ attemptRetentionMs: 2 * DAY, webhookRetentionMs: 7 * DAY }).prune(),
    ).toMatchObject({
      attempts: 1,
      attemptStats: 0,
      webhooks: 0,
      entityChanges: 0,
    });
    expect(await maintenance({ webhookRetentionMs: 2 * DAY }).prune()).toMatchObject({
      attempts: 0,
      attemptStats: 0,
      webhooks: 1,
      entityChanges: 1,
    });
    expect(await db.knex('webhooks').where({ id: finished })).toEqual([]);
  });

  it('leaves a partition it cannot attach in time to the next run, and does the rest', async () => {
    const today = await change(new Date());
    const missing = partitionOf('entity_changes', new Date(Date.now() + 2 * DAY));
    await db.knex.raw('alter table entity_changes detach partition ??', [missing]);
    await db.knex.raw('drop table ??', [missing]);
    const finished = await webhook({ state: Successful, created: daysAgo(40), completedAt: daysAgo(40) });
    // an open transaction that wrote a webhook: attaching a change partition waits for it
    const blocker = new pg.Client({ connectionString: db.url });
    await blocker.connect();
    let report;
    try {
      await blocker.query('begin');
      await blocker.query(
        `insert into webhooks (registration_id, bucket, event_id, entity_change_id, state)
         values ($1, (select bucket from webhook_registrations where id = $1), $2, $3, $4)`,
        [registrationId, eventId, today, Created],
      );
      report = await maintenance().prune();
    } finally {
      await blocker.query('rollback');
      await blocker.end();
    }
    expect(report).toMatchObject({ webhooks: 1 });
    expect(report!.partitions.busy).toContain('entity_changes');
    expect(await db.knex('webhooks').where({ id: finished })).toEqual([]);
    expect(await partitions('entity_changes')).not.toContain(missing);
    expect((await maintenance().prune())!.partitions).toMatchObject({ created: [missing], busy: [] });
  });

  it('deletes the per-minute attempt figures older than two days, in batches, and keeps the rest', async () => {
    const minutes = [daysAgo(3), daysAgo(2.5), daysAgo(2.01), daysAgo(1.99), daysAgo(0)];
    await db.knex('webhook_attempt_stats').insert(
      minutes.flatMap((minute) =>
        [-1, 40].map((bucket) => ({
          registration_id: registrationId,
          minute,
          bucket,
          attempts: 2,
          successes: 1,
        })),
      ),
    );
    expect(await maintenance({ pruneBatch: 2 }).prune()).toMatchObject({ attemptStats: 6 });
    const kept = await db.knex('webhook_attempt_stats').orderBy('minute').pluck('minute');
    expect(kept.map((minute: Date) => minute.getTime())).toEqual(
      [minutes[3]!, minutes[3]!, minutes[4]!, minutes[4]!].map((minute) => minute.getTime()),
    );
  });
});

describe('the prune job, short-lived rows', () => {
  it('deletes rate-limit counts, refresh tokens and MFA login tokens a day past their use, in batches, and keeps the rest', async () => {
    const [group] = await db
      .knex('account_groups')
      .insert({ party_id: partyId, name: 'prune' })
      .returning('id');
    const [account] = await db
      .knex('accounts')
      .insert({
        party_id: partyId,
        group_id: group.id,
        email: `prune-${Date.now()}@example.com`,
        password_hash: 'x',
      })
      .returning('id');
    // a day and a minute past their use, and a minute short of it
    const dead = [daysAgo(3), daysAgo(1.001)];
    const kept = [daysAgo(0.999), daysAgo(0), daysAgo(-1)];
    const stamps = [...dead, ...dead, ...kept];
    await db
      .knex('rate_limit_hits')
      .insert(stamps.map((windowStart, i) => ({ key: `login:${i}`, window_start: windowStart, hits: 1 })));
    const family = randomUUID();
    await db.knex('refresh_tokens').insert(
      stamps.map((expiresAt, i) => ({
        jti: randomUUID(),
        family_id: family,
        account_id: account.id,
        expires_at: expiresAt,
        used_at: i % 2 ? expiresAt : null,
      })),
    );
    await db
      .knex('mfa_login_tokens')
      .insert(
        stamps.map((expiresAt) => ({ jti: randomUUID(), account_id: account.id, expires_at: expiresAt })),
      );

    const report = await maintenance({ pruneBatch: 3 }).prune();
    expect(report!.expired).toEqual({ rate_limit_hits: 4, refresh_tokens: 4, mfa_login_tokens: 4 });
    const times = (dates: Date[]) => dates.map((date) => date.getTime()).sort();
    expect(times(await db.knex('rate_limit_hits').pluck('window_start'))).toEqual(times(kept));
    expect(times(await db.knex('refresh_tokens').pluck('expires_at'))).toEqual(times(kept));
    expect(times(await db.knex('mfa_login_tokens').pluck('expires_at'))).toEqual(times(kept));
  });
});

describe('the repair job', () => {
  it('promotes the head of a stranded group and warns about it', async () => {
    const { promotable } = await strandedGroup();
    const reports: unknown[] = [];
    const report = await maintenance({ onRun: (...args) => reports.push(args) }).repair();
    expect(report).toEqual({ examined: 1, promoted: 1, recounted: 1 });
    expect(reports).toEqual([['repair', 'done', report]]);
    expect(await db.knex('webhooks').where({ id: promotable }).first('state')).toEqual({ state: Created });
    expect(logs).toContainEqual(
      expect.objectContaining({
        level: 40,
        msg: 'repair: promoted the head of a stranded group',
        webhookId: promotable,
      }),
    );
    // a healthy queue: nothing to do, and no line above debug
    logs.length = 0;
    expect(await maintenance().repair()).toEqual({ examined: 1, promoted: 0, recounted: 0 });
    expect(logs.filter((l) => (l.level as number) > 20)).toEqual([]);
  });
});

describe('one replica at a time', () => {
  it('skips a job another session holds, and runs it once that session lets go', async () => {
    const { promotable } = await strandedGroup();
    const reports: unknown[] = [];
    const job = maintenance({ onRun: (...args) => reports.push(args) });
    const release = await holdJobLock('repair');
    try {
      expect(await job.repair()).toBeNull();
      expect(await db.knex('webhooks').where({ id: promotable }).first('state')).toEqual({ state: Pending });
      // the other job has a lock of its own
      expect(await job.prune()).not.toBeNull();
    } finally {
      await release();
    }
    expect(await job.repair()).toMatchObject({ promoted: 1 });
    expect(reports.map((r) => (r as unknown[]).slice(0, 2))).toEqual([
      ['repair', 'skipped'],
      ['prune', 'done'],
      ['repair', 'done'],
    ]);
  });

  it('lets go of the lock after each run, also when the run fails', async () => {
    const job = maintenance();
    await job.repair();
    // a broken database URL: the run fails, is reported, and throws nothing
    const reports: unknown[] = [];
    const broken = maintenance({
      connectionString: db.url.replace(/\/[^/]+$/, '/no_such_database'),
      onRun: (...args) => reports.push(args),
    });
    expect(await broken.prune()).toBeNull();
    expect(reports).toEqual([['prune', 'failed']]);
    const { rows } = await db.knex.raw(
      `select count(*)::int as n from pg_locks where locktype = 'advisory' and database = (select oid from pg_database where datname = current_database())`,
    );
    expect(rows[0].n).toBe(0);
  });
});

describe('the schedule', () => {
  it('runs the repair sweep on its cron schedule', async () => {
    const { promotable } = await strandedGroup();
    const job = maintenance({ repairSchedule: '* * * * * *' }); // every second
    job.start();
    try {
      await eventually(
        async () => (await db.knex('webhooks').where({ id: promotable }).first('state')).state === Created,
        { timeoutMs: 5_000, what: 'the sweep running' },
      );
    } finally {
      await job.stop();
    }
  });
});

describe('the configuration of maintenance and leases', () => {
  const base = { DATABASE_URL: 'postgres://localhost/x' };

  it('has the documented defaults', () => {
    expect(loadConfig(base)).toMatchObject({
      WEBHOOK_RETENTION: 30 * DAY,
      WEBHOOK_ATTEMPT_RETENTION: 30 * DAY,
      DISPATCHER_PRUNE_SCHEDULE: '0 * * * *',
      DISPATCHER_REPAIR_SCHEDULE: '* * * * *',
      LEASE_MS: 2 * 15_000 + 30_000,
    });
  });

  it('takes retention in days or any duration, six-field cron, and a lease override', () => {
    expect(
      loadConfig({
        ...base,
        WEBHOOK_RETENTION: '7d',
        WEBHOOK_ATTEMPT_RETENTION: '36h',
        DISPATCHER_REPAIR_SCHEDULE: '*/10 * * * * *',
        WEBHOOK_TIMEOUT: '2s',
        DISPATCHER_LEASE: '3s',
      }),
    ).toMatchObject({
      WEBHOOK_RETENTION: 7 * DAY,
      WEBHOOK_ATTEMPT_RETENTION: 36 * 3_600_000,
      DISPATCHER_REPAIR_SCHEDULE: '*/10 * * * * *',
      LEASE_MS: 3_000,
    });
  });

  it('refuses a lease no longer than a delivery, bad schedules and bad retention periods', () => {
    expect(() => loadConfig({ ...base, WEBHOOK_TIMEOUT: '15s', DISPATCHER_LEASE: '15s' })).toThrow(
      /DISPATCHER_LEASE: must be longer than WEBHOOK_TIMEOUT/,
    );
    expect(() =>
      loadConfig({
        ...base,
        DISPATCHER_PRUNE_SCHEDULE: 'hourly',
        DISPATCHER_REPAIR_SCHEDULE: '61 * * * *',
        WEBHOOK_RETENTION: '0d',
        WEBHOOK_ATTEMPT_RETENTION: 'a month',
      }),
    ).toThrow(
      /WEBHOOK_RETENTION: a retention period must be longer than zero[\s\S]*WEBHOOK_ATTEMPT_RETENTION[\s\S]*DISPATCHER_PRUNE_SCHEDULE: "hourly" is not a cron expression[\s\S]*DISPATCHER_REPAIR_SCHEDULE/,
    );
  });
});
