import type { AddressInfo } from 'node:net';
import { partyBucket, queueStats, registrationBucket } from '@platform/db';
import { WebhookState } from '@platform/shared';
import { createTestDatabase, seedParty, type TestDatabase } from '@platform/testkit';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { createDispatcherMetrics, MetricsRegistry } from './metrics';
import { createStatusServer } from './server';

describe('MetricsRegistry', () => {
  it('renders counters, gauges and histograms in the Prometheus text format', async () => {
    const registry = new MetricsRegistry();
    const plain = registry.counter('things_total', 'Things.');
    const labelled = registry.counter('calls_total', 'Calls by "kind".', ['kind', 'code']);
    registry.gauge('level', 'A level.', () => 2.5);
    const histogram = registry.histogram('latency_seconds', 'Latency.', [0.1, 1]);

    expect(await registry.render()).toContain(
      '# HELP things_total Things.\n# TYPE things_total counter\nthings_total 0\n',
    );
    plain.inc();
    plain.inc({}, 2);
    labelled.inc({ kind: 'a', code: '1' });
    labelled.inc({ code: '1', kind: 'a' }); // the same series whatever the order
    labelled.inc({ kind: 'q"uo\\te\nd', code: '2' });
    histogram.observe(0.05);
    histogram.observe(0.1); // a bound is inclusive
    histogram.observe(0.5);
    histogram.observe(7);

    expect(await registry.render()).toBe(
      [
        '# HELP things_total Things.',
        '# TYPE things_total counter',
        'things_total 3',
        '# HELP calls_total Calls by "kind".',
        '# TYPE calls_total counter',
        'calls_total{kind="a",code="1"} 2',
        'calls_total{kind="q\\"uo\\\\te\\nd",code="2"} 1',
        '# HELP level A level.',
        '# TYPE level gauge',
        'level 2.5',
        '# HELP latency_seconds Latency.',
        '# TYPE latency_seconds histogram',
        'latency_seconds_bucket{le="0.1"} 2',
        'latency_seconds_bucket{le="1"} 3',
        'latency_seconds_bucket{le="+Inf"} 4',
        'latency_seconds_sum 7.65',
        'latency_seconds_count 4',
        '',
      ].join('\n'),
    );
    expect(labelled.get({ kind: 'a', code: '1' })).toBe(2);
  });

  it('refuses what Prometheus would not read', () => {
    const registry = new MetricsRegistry();
    const counter = registry.counter('calls_total', 'Calls.', ['kind']);
    expect(() => counter.inc({ other: 'x' })).toThrow(/takes the labels kind/);
    expect(() => counter.inc({ kind: 'x' }, -1)).toThrow(/cannot decrease/);
    expect(() => registry.counter('calls_total', 'Again.')).toThrow(/registered twice/);
    expect(() => registry.gauge('bad-name', 'x', () => 1)).toThrow(/not a metric name/);
    expect(() => registry.histogram('h', 'x', [1, 1])).toThrow(/must increase/);
  });

  it('leaves out the sample of a gauge that cannot be collected, and says why', async () => {
    const failures: string[] = [];
    const registry = new MetricsRegistry((_error, name) => failures.push(name));
    registry.gauge('broken', 'Broken.', async () => {
      throw new Error('database down');
    });
    registry.gauge('fine', 'Fine.', () => 1);
    const text = await registry.render();
    expect(text).toContain('# TYPE broken gauge\n# HELP fine');
    expect(text).not.toMatch(/^broken /m);
    expect(text).toMatch(/^fine 1$/m);
    expect(failures).toEqual(['broken']);
  });
});

describe('the queue gauges', () => {
  let db: TestDatabase;
  let registrations: { plain: number; grouped: number; continuing: number };
  let changeId: number;
  let eventIds: Record<number, number>;

  const webhook = async (
    registration: number,
    state: WebhookState,
    options: { dueInSeconds?: number; groupKey?: string } = {},
  ) => {
    await db.knex('webhooks').insert({
      registration_id: registration,
      bucket: registrationBucket(db.knex, registration),
      event_id: eventIds[registration],
      entity_change_id: changeId,
      state,
      next_attempt_at: db.knex.raw(`now() + make_interval(secs => ?)`, [options.dueInSeconds ?? 0]),
      group_key: options.groupKey ?? null,
      group_seq: options.groupKey ? 1 : null,
    });
  };

  beforeAll(async () => {
    db = await createTestDatabase();
    const party = { id: await seedParty(db.knex) };
    const insert = async (shouldGroup: boolean, continueAfterFail: boolean) => {
      const [row] = await db
        .knex('webhook_registrations')
        .insert({
          party_id: party.id,
          bucket: partyBucket(db.knex, party.id),
          target_url: 'http://127.0.0.1:9/hook',
          should_group: shouldGroup,
          should_group_continue_after_fail: continueAfterFail,
          signing_secret: 'sealed',
        })
        .returning('id');
      return row.id as number;
    };
    registrations = {
      plain: await insert(false, false),
      grouped: await insert(true, false),
      continuing: await insert(true, true),
    };
    eventIds = {};
    for (const id of Object.values(registrations)) {
      const [event] = await db
        .knex('webhook_events')
        .insert({
          registration_id: id,
          bucket: registrationBucket(db.knex, id),
          entity_name: 'Unit',
          type: 2,
        })
        .returning('id');
      eventIds[id] = event.id;
    }
    const [change] = await db
      .knex('entity_changes')
      .insert({ entity_name: 'Unit', type: 2, entity_id: 1, entity: {}, initiator_party_id: party.id })
      .returning('id');
    changeId = change.id;
  });
  afterAll(() => db.drop());
  beforeEach(() => db.knex('webhooks').delete());

  it('count what is due, how long the oldest waits, and the groups a Failed webhook blocks', async () => {
    expect(await queueStats(db.knex, { cap: 1000 })).toEqual({
      due: { active: 0, paused: 0, disabled: 0 },
      oldestDueSeconds: { active: 0, paused: 0, disabled: 0 },
      blockedGroups: 0,
      openBreakers: 0,
    });

    await webhook(registrations.plain, WebhookState.Created, { dueInSeconds: -120 }); // due for two minutes
    await webhook(registrations.plain, WebhookState.Retrying, { dueInSeconds: -5 }); // a retry, due
    await webhook(registrations.plain, WebhookState.Retrying, { dueInSeconds: 300 }); // a retry, later
    await webhook(registrations.plain, WebhookState.Created, { dueInSeconds: 60 }); // leased: in flight
    await webhook(registrations.grouped, WebhookState.Pending, { dueInSeconds: -500, groupKey: 'Unit:1' }); // Pending
    await webhook(registrations.plain, WebhookState.Successful, { dueInSeconds: -500 }); // Successful
    await webhook(registrations.grouped, WebhookState.Failed, { groupKey: 'Unit:1' }); // blocks its group
    await webhook(registrations.grouped, WebhookState.Failed, { groupKey: 'Unit:2' }); // blocks another
    await webhook(registrations.continuing, WebhookState.Failed, { groupKey: 'Unit:1' }); // released its group
    await webhook(registrations.plain, WebhookState.Failed); // ungrouped: blocks nothing

    const stats = await queueStats(db.knex, { cap: 1000 });
    expect(stats).toMatchObject({ due: { active: 2, paused: 0, disabled: 0 }, blockedGroups: 2 });
    expect(stats.oldestDueSeconds.active).toBeGreaterThanOrEqual(120);
    expect(stats.oldestDueSeconds.active).toBeLessThan(180);
  });

  it('count the due webhooks of paused and of disabled registrations apart from what can be delivered', async () => {
    const setStatus = (id: number, status: 'active' | 'paused' | 'disabled') =>
      db
        .knex('webhook_registrations')
        .where({ id })
        .update({ status, disabled_reason: status === 'disabled' ? 'gone' : null });
    await webhook(registrations.plain, WebhookState.Created, { dueInSeconds: -60 });
    for (let i = 0; i < 3; i++)
      await webhook(registrations.grouped, WebhookState.Created, { dueInSeconds: -3_600 }); // paused an hour
    await webhook(registrations.continuing, WebhookState.Retrying, { dueInSeconds: -600 }); // disabled
    await webhook(registrations.continuing, WebhookState.Retrying, { dueInSeconds: 600 }); // disabled, later
    await setStatus(registrations.grouped, 'paused');
    await setStatus(registrations.continuing, 'disabled');
    try {
      for (const cap of [1000, 4]) {
        // under the cap the active count is the total less the held; at the cap it is read alone
        const stats = await queueStats(db.knex, { cap });
        expect(stats.due).toEqual({ active: 1, paused: 3, disabled: 1 });
        // the long pause does not make the deliverable backlog look old
        expect(stats.oldestDueSeconds.active).toBeGreaterThanOrEqual(60);
        expect(stats.oldestDueSeconds.active).toBeLessThan(120);
        expect(stats.oldestDueSeconds.paused).toBeGreaterThanOrEqual(3_600);
        expect(stats.oldestDueSeconds.disabled).toBeGreaterThanOrEqual(600);
        expect(stats.oldestDueSeconds.disabled).toBeLessThan(3_600);
      }
      expect((await queueStats(db.knex, { cap: 2 })).due).toEqual({ active: 1, paused: 2, disabled: 1 });
    } finally {
      await setStatus(registrations.grouped, 'active');
      await setStatus(registrations.continuing, 'active');
    }
  });

  it('count the endpoints whose breaker is open or half-open', async () => {
    const partyId = await seedParty(db.knex);
    const endpoints = (
      (await db
        .knex('webhook_targets')
        .insert(
          ['a', 'b', 'c'].map((path) => ({
            party_id: partyId,
            bucket: partyBucket(db.knex, partyId),
            url: `http://127.0.0.1:9/${path}`,
            origin: 'http://127.0.0.1:9',
          })),
        )
        .returning('id')) as { id: number }[]
    ).map((row) => row.id);
    const breaker = (id: number, state: 'closed' | 'open' | 'half-open') =>
      db
        .knex('webhook_targets')
        .where({ id })
        .update({
          breaker_state: state,
          open_until: state === 'open' ? db.knex.raw(`now() + interval '1 minute'`) : null,
        });
    try {
      await breaker(endpoints[0]!, 'open');
      await breaker(endpoints[1]!, 'half-open');
      expect((await queueStats(db.knex, { cap: 1000 })).openBreakers).toBe(2);
      await breaker(endpoints[0]!, 'closed');
      expect((await queueStats(db.knex, { cap: 1000 })).openBreakers).toBe(1);
    } finally {
      await db.knex('webhook_targets').whereIn('id', endpoints).delete();
    }
  });

  it('stop counting at the cap', async () => {
    for (let i = 0; i < 5; i++)
      await webhook(registrations.plain, WebhookState.Created, { dueInSeconds: -1 });
    for (let i = 0; i < 3; i++)
      await webhook(registrations.grouped, WebhookState.Failed, { groupKey: `Unit:${i}` });
    expect(await queueStats(db.knex, { cap: 2 })).toMatchObject({
      due: { active: 2, paused: 0, disabled: 0 },
      blockedGroups: 2,
    });
  });

  it('are served on /metrics next to the delivery counters, and /healthz reports the loop', async () => {
    await webhook(registrations.plain, WebhookState.Created, { dueInSeconds: -30 });
    await webhook(registrations.grouped, WebhookState.Failed, { groupKey: 'Unit:1' });
    let inFlight = 3;
    let queueDown = false;
    const metrics = createDispatcherMetrics({
      listening: () => true,
      loopAlive: () => true,
      inFlight: () => inFlight,
      queueStats: () => (queueDown ? Promise.reject(new Error('down')) : queueStats(db.knex, { cap: 1000 })),
    });
    metrics.recordAttempt({ errorKind: null, durationMs: 40 });
    metrics.recordAttempt({ errorKind: 'status', durationMs: 1200 });
    metrics.recordAttempt({ errorKind: 'timeout', durationMs: 15_000 });
    // no request was sent: counted apart as skipped, no duration observed
    metrics.recordAttempt({ errorKind: 'circuit-open', durationMs: 0 });
    metrics.recordAttempt({ errorKind: 'interrupted', durationMs: 0 });
    metrics.disabledRegistrations.inc({ reason: 'gone' });
    metrics.notifications.inc();
    let loop: 'running' | 'stalled' | 'stopped' = 'running';
    const server = createStatusServer({
      health: () => ({ listening: true, loop, inFlight }),
      metrics: () => metrics.registry.render(),
    });
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    const base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    try {
      const response = await fetch(`${base}/metrics`);
      expect(response.headers.get('content-type')).toBe('text/plain; version=0.0.4; charset=utf-8');
      const text = await response.text();
      for (const line of [
        'dispatcher_up 1',
        'dispatcher_listening 1',
        'dispatcher_loop_alive 1',
        'dispatcher_notifications_total 1',
        'dispatcher_deliveries_total{outcome="success"} 1',
        'dispatcher_deliveries_total{outcome="status"} 1',
        'dispatcher_deliveries_total{outcome="timeout"} 1',
        'dispatcher_skipped_attempts_total{reason="circuit-open"} 1',
        'dispatcher_skipped_attempts_total{reason="interrupted"} 1',
        'dispatcher_registrations_disabled_total{reason="gone"} 1',
        'dispatcher_open_breakers 0',
        'dispatcher_attempt_duration_seconds_bucket{le="0.05"} 1',
        'dispatcher_attempt_duration_seconds_bucket{le="2.5"} 2',
        'dispatcher_attempt_duration_seconds_bucket{le="15"} 3',
        'dispatcher_attempt_duration_seconds_count 3',
        'dispatcher_attempt_duration_seconds_sum 16.24',
        'dispatcher_deliveries_in_flight 3',
        'dispatcher_due_backlog{status="active"} 1',
        'dispatcher_due_backlog{status="paused"} 0',
        'dispatcher_due_backlog{status="disabled"} 0',
        'dispatcher_oldest_due_age_seconds{status="paused"} 0',
        'dispatcher_blocked_groups 1',
      ]) {
        expect(text.split('\n')).toContain(line);
      }
      expect(text).not.toMatch(/dispatcher_deliveries_total\{outcome="(circuit-open|interrupted)"\}/);
      expect(
        Number(/^dispatcher_oldest_due_age_seconds\{status="active"\} (\S+)$/m.exec(text)?.[1]),
      ).toBeGreaterThanOrEqual(30);
      expect(Number(/^process_resident_memory_bytes (\d+)$/m.exec(text)?.[1])).toBeGreaterThan(1_000_000);

      // the database gone: the queue gauges go missing, the process' own series stay
      queueDown = true;
      inFlight = 0;
      const degraded = await (await fetch(`${base}/metrics`)).text();
      expect(degraded).not.toMatch(/^dispatcher_due_backlog /m);
      expect(degraded).toMatch(/^dispatcher_deliveries_in_flight 0$/m);

      expect(await (await fetch(`${base}/healthz`)).json()).toEqual({
        status: 'ok',
        listening: true,
        loop: 'running',
        inFlight: 0,
        runtime: { node: process.version },
      });
      loop = 'stalled';
      const stalled = await fetch(`${base}/healthz`);
      expect(stalled.status).toBe(503);
      expect(await stalled.json()).toMatchObject({ status: 'unavailable', loop: 'stalled' });
    } finally {
      await new Promise((r) => server.close(r));
    }
  });
});
