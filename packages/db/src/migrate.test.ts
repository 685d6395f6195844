import { CLAIMABLE_WEBHOOK_STATES, PERMISSIONS } from '@platform/shared';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { migrate } from './migrate';
import type { Knex } from 'knex';
import { CLAIM_PICK_SQL, claimBindings } from './queue/claim';
import { sqlList } from './queue/sql';
import { createTestDatabase, type TestDatabase } from '@platform/testkit';

let db: TestDatabase;
beforeAll(async () => {
  db = await createTestDatabase();
});
afterAll(() => db.drop());

describe('migrations', () => {
  it('create every table of the design', async () => {
    const { rows } = await db.knex.raw<{ rows: { table_name: string }[] }>(
      `select table_name from information_schema.tables where table_schema = 'public'`,
    );
    const tables = rows.map((r) => r.table_name);
    for (const table of [
      'parties',
      'account_groups',
      'permissions',
      'account_group_permissions',
      'accounts',
      'account_contact_details',
      'refresh_tokens',
      'recovery_codes',
      'rate_limit_hits',
      'mail_outbox',
      'webhook_registrations',
      'webhook_events',
      'entity_changes',
      'webhook_groups',
      'webhooks',
      'webhook_attempts',
    ]) {
      expect(tables).toContain(table);
    }
  });

  it('are idempotent and load the permission catalog', async () => {
    expect(await migrate(db.knex)).toEqual([]);
    const [row] = await db.knex('permissions').count<{ count: string }[]>({ count: '*' });
    expect(Number(row?.count)).toBe(PERMISSIONS.length);
  });

  it('serve the fair claim from the partial claimable index, and the oldest due from the due index', async () => {
    await db.knex.raw('set enable_seqscan = off');
    const explain = async (sql: string, bindings: readonly Knex.RawBinding[] | Knex.ValueDict = []) => {
      const { rows } = await db.knex.raw<{ rows: { 'QUERY PLAN': string }[] }>(`explain ${sql}`, bindings);
      return rows.map((r) => r['QUERY PLAN']).join('\n');
    };
    const claim = await explain(
      CLAIM_PICK_SQL,
      claimBindings({ batch: 100, leaseMs: 60_000, dispatcherId: 'x', rooms: new Map(), defaultRoom: 16 }),
    );
    expect(claim).toContain('webhooks_claimable');
    expect(claim).not.toMatch(/Seq Scan on webhooks /);
    expect(
      await explain(
        `select next_attempt_at from webhooks where state in (${sqlList(CLAIMABLE_WEBHOOK_STATES)})
          order by next_attempt_at limit 1`,
      ),
    ).toContain('webhooks_due');
  });
});
