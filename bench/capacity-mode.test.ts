import { randomBytes } from 'node:crypto';
import { afterAll, describe, expect, it } from 'vitest';
import { createSecretBox } from '@platform/crypto';
import { createTestDatabase, type TestDatabase } from '@platform/testkit';
import { capacityMode } from './capacity-mode';
import type { BenchContext } from './context';

// docs/scaling.md's arithmetic rests on these figures: they must count what really happened
describe('the capacity mode', () => {
  const databases: TestDatabase[] = [];
  afterAll(() => Promise.all(databases.map((db) => db.drop())));
  const context = {
    cluster: {
      server: 'test',
      create: async (mode: string) => {
        const db = await createTestDatabase();
        databases.push(db);
        return { name: mode, url: db.url, knex: db.knex };
      },
      close: async () => {},
    },
    secrets: createSecretBox(randomBytes(32)),
    signingSecret: `whsec_${randomBytes(32).toString('base64')}`,
    log: () => {},
  } as unknown as BenchContext;

  it('measures every phase of every scenario, per webhook', { timeout: 120_000 }, async () => {
    const result = await capacityMode(context, { webhooks: 300 });
    expect(result.scenarios.map((s) => [s.grouped, s.registrations])).toEqual([
      [false, 1],
      [false, 10],
      [true, 1],
      [true, 10],
    ]);
    for (const s of result.scenarios) {
      const perChange = Number((1 / s.registrations).toFixed(3));
      expect(s.webhooks).toBe(s.changes * s.registrations);
      expect(s.pruned).toEqual({ attempts: s.webhooks, webhooks: s.webhooks, entityChanges: s.changes });
      // one enqueue statement per change, in BEGIN … COMMIT
      expect(s.perWebhook.statements.enqueue).toBe(perChange);
      expect(s.perWebhook.roundTrips.enqueue).toBe(Number((3 / s.registrations).toFixed(3)));
      // completions carry 16 results; one statement, one round trip each
      expect(s.perWebhook.statements.complete).toBeGreaterThanOrEqual(1 / 16 - 0.001);
      expect(s.perWebhook.roundTrips.complete).toBe(s.perWebhook.statements.complete);
      // the rows a delivered webhook leaves, from the tables' own counters
      expect(s.tables.entity_changes).toMatchObject({ inserts: perChange, liveRows: perChange });
      expect(s.tables.webhooks).toMatchObject({ inserts: 1, liveRows: 1, updates: 2 });
      expect(s.tables.webhook_attempts).toMatchObject({ inserts: 1, liveRows: 1 });
      expect(s.tables.webhooks.heapBytes).toBeGreaterThan(0);
      expect(s.tables.webhooks.indexBytes).toBeGreaterThan(0);
      for (const phase of ['enqueue', 'claim', 'complete', 'vacuum', 'prune'] as const) {
        expect(s.perWebhook.walBytes[phase], phase).toBeGreaterThan(0);
      }
      const { enqueue, claim, complete, delivered } = s.perWebhook.walBytes;
      expect(Math.abs(delivered! - (enqueue! + claim! + complete!))).toBeLessThanOrEqual(2);
      expect(s.enqueuePlan.planningMs).toBeGreaterThan(0);
      expect(s.enqueuePlan.executionMs).toBeGreaterThan(0);
      // the test's Postgres runs on this machine, so its processes' CPU is readable
      expect(s.perWebhook.databaseCpuMs.delivered).toBeGreaterThan(0);
      expect(s.perWebhook.backendCpuMs.delivered).toBeGreaterThan(0);
    }
    // grouped (300 changes of 100 entities): only the 100 heads are claimed, in two claims and a
    // last empty one; each result leases its group's next webhook
    const grouped = result.scenarios.find((s) => s.grouped && s.registrations === 1)!;
    expect(grouped.perWebhook.statements.claim! * grouped.webhooks).toBeCloseTo(3, 0);
  });
});
