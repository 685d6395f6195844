import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestDatabase, type TestDatabase } from '@platform/testkit';
import type { Knex } from 'knex';
import { createKnex } from '../knex';
import { claimNotifiedWebhooks } from './claim';
import { backlog, ownRegistration } from '../../tests/queue';

// A dispatcher's session keeps the plans of the queue functions' statements for as long as it
// lives (GENERIC_PLANS), and a plan made while the tables are young is kept as they grow until
// their statistics change, which on a database whose autovacuum has not analyzed them yet is
// never. The functions that read rows by primary key (webhooks_lease, webhook_deliveries) must
// not scan a whole table in such a session (PRIMARY_KEY_PLANS): planned on an empty queue, a
// lease of one row read webhooks, entity_changes and webhook_events whole once they held thousands.

let db: TestDatabase;
let knex: Knex;
/** One connection: the dispatcher's session, whose cached plans the test is about. */
let session: Knex;

beforeAll(async () => {
  db = await createTestDatabase();
  knex = db.knex;
  session = createKnex(db.url, { pool: { min: 1, max: 1 } });
});
afterAll(async () => {
  await session.destroy();
  await db.drop();
});

/** Sequential scans so far of the tables a lease joins, as the statistics collector counts them. */
async function seqScans(): Promise<Record<string, number>> {
  const { rows } = await knex.raw<{ rows: { relname: string; seq_scan: string }[] }>(
    `select relname, seq_scan from pg_stat_user_tables
      where relname in ('webhooks', 'webhook_events', 'webhook_registrations') or relname like 'entity_changes%'`,
  );
  return Object.fromEntries(rows.map((r) => [r.relname, Number(r.seq_scan)]));
}

/** A notified claim of `id` in the session, its statistics flushed before it answers. */
async function leaseInSession(id: number): Promise<number[]> {
  const claimed = await claimNotifiedWebhooks(session, {
    ids: [id],
    leaseMs: 60_000,
    dispatcherId: 'd1',
    fullTargets: [],
    origins: [],
    originHeld: [],
  });
  // a backend reports its counters when it goes idle, at most once a second unless told to
  await session.raw('select pg_stat_force_next_flush()');
  return claimed.leased.map((w) => Number(w.id));
}

describe('the plans of the lease in a long-lived session', () => {
  it('read the leased rows by primary key once the tables have grown past the plans made when they were young', async () => {
    const registration = await ownRegistration(knex, 'http://127.0.0.1:9/a');
    const [first] = await backlog(knex, registration, 1);
    // planned on a queue of one row, more than the five custom plans' worth (plan_cache_mode = auto
    // would re-plan the first five calls): each call leases the row again once its lease has run out
    for (let i = 0; i < 7; i++) {
      expect(await leaseInSession(first!)).toEqual([first]);
      await knex('webhooks').where({ id: first }).update({ locked_by: null, next_attempt_at: knex.fn.now() });
    }

    // the tables grow by thousands of rows, written set-based and not analyzed: the session's plans stay
    await knex.raw(
      `with changes as (
         insert into entity_changes (entity_name, type, entity_id, entity, initiator_party_id, initiator_account_id)
         select entity_name, type, entity_id + i, entity, initiator_party_id, initiator_account_id
           from entity_changes, generate_series(1, 5000) i
         returning id)
       insert into webhooks (registration_id, bucket, event_id, entity_change_id, state, next_attempt_at)
       select w.registration_id, w.bucket, w.event_id, c.id, w.state, now() from changes c, webhooks w where w.id = ?`,
      [first!],
    );
    await knex.raw(
      `with registrations as (
         insert into webhook_registrations (party_id, bucket, target_url, signing_secret)
         select party_id, bucket, target_url || '/' || i, signing_secret
           from webhook_registrations, generate_series(1, 2000) i
         returning id, bucket)
       insert into webhook_events (registration_id, bucket, entity_name, type)
       select id, bucket, 'Unit', 2 from registrations`,
    );
    const last = Number((await knex('webhooks').max('id as id').first())!.id);

    const before = await seqScans();
    expect(await leaseInSession(last)).toEqual([last]);
    expect(await seqScans()).toEqual(before);
  });
});
