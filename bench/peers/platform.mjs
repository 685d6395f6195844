// Our dispatcher as a subject of the peer benchmark (../shared/bench-peers, README "Adding our
// dispatcher to the same run"). `pnpm bench --peers` (bench/peers-mode.ts) copies the harness to a
// temporary folder, puts this file in its peers/ and runs it there, with the harness's own pg.
//
// The dispatcher is the production bundle (apps/dispatcher/dist/main.mjs), loaded into the
// harness's worker process as the peers' libraries are (its CPU is the "worker" CPU; no process
// of ours counts as foreign load). It does the work the peers' handler does, by itself: its own
// POST to the harness's target and its own attempt row (webhook_attempts) per delivery.
//
// Environment (set by bench/peers-mode.ts):
//   PLATFORM_BUNDLE        absolute path of apps/dispatcher/dist/main.mjs
//   PLATFORM_TEMPLATE_DB   a migrated database holding one party and one ungrouped registration
//   PLATFORM_SECRET_KEY    base64 key the registration's signing secret is sealed with
//   PLATFORM_DATA_DIR      the dispatcher's DATA_DIR (its development JWT key goes there)
import { pathToFileURL } from 'node:url';
import pg from 'pg';
import { ADMIN_URL, withClient } from '../lib/common.mjs';

const env = (name) => {
  const value = process.env[name];
  if (!value) throw new Error(`${name} is not set: run this adapter through pnpm bench --peers`);
  return value;
};

// WebhookState (packages/shared/src/enums.ts): Created 1, Successful 3; undelivered: not 3, 5, 7
const CREATED = 1;
const PENDING_SQL = 'select count(*)::int as n from webhooks where state not in (3, 5, 7)';

/** The registration and event every webhook of the run belongs to (seeded in the template). */
async function registration(client) {
  const { rows } = await client.query(
    `select r.id as registration_id, r.party_id, e.id as event_id
       from webhook_registrations r join webhook_events e on e.registration_id = r.id
      order by r.id, e.id limit 1`,
  );
  if (!rows[0]) throw new Error('the template database has no registration');
  return rows[0];
}

export default {
  name: 'platform',
  version: 'dispatcher bundle',

  settings(concurrency) {
    return {
      DISPATCHER_CONCURRENCY: concurrency,
      process: 'the production bundle, imported into the harness worker process',
      enqueue: 'one statement per batch: entity_changes and their webhooks (Created, due now)',
      attemptInsert: "the dispatcher's own webhook_attempts rows (public.attempts is a view of them)",
      body: "our delivery body around the harness webhook's entity, signed (Standard Webhooks)",
    };
  },

  /**
   * The harness made a fresh database; it becomes a clone of the migrated, seeded template, and
   * `attempts` a view of webhook_attempts, so the harness counts our attempt rows.
   */
  async setup({ dbUrl }) {
    const name = new URL(dbUrl).pathname.slice(1);
    await withClient(ADMIN_URL, async (c) => {
      await c.query(`drop database if exists ${name} with (force)`);
      await c.query(`create database ${name} template ${env('PLATFORM_TEMPLATE_DB')}`);
    });
    await withClient(dbUrl, (c) =>
      c.query(`drop table if exists attempts;
        create view attempts as
          select webhook_id, status_code as status, duration_ms, started_at as created_at from webhook_attempts`),
    );
  },

  async makeProducer({ dbUrl }) {
    const pool = new pg.Pool({ connectionString: dbUrl, max: 4 });
    const reg = await pool.connect().then(async (c) => {
      try {
        return await registration(c);
      } finally {
        c.release();
      }
    });
    return {
      // the changes and their webhooks in one statement, as a burst of API writes leaves them
      async enqueueBatch(webhooks) {
        await pool.query(
          `with c as (
             insert into entity_changes (entity_name, type, entity_id, entity, initiator_party_id, initiator_account_id)
             select 'Property', 2, x.ord, x.e, $2::int, null
               from jsonb_array_elements($1::jsonb) with ordinality as x(e, ord)
             returning id)
           insert into webhooks (registration_id, event_id, entity_change_id, state, next_attempt_at)
           select $3::int, $4::int, id, ${CREATED}, now() from c order by id`,
          [JSON.stringify(webhooks.map((w) => w.entity)), reg.party_id, reg.registration_id, reg.event_id],
        );
      },
      async enqueueOne() {
        throw new Error('platform: only the throughput mode (pnpm bench has its own latency mode)');
      },
      warm: () => pool.query('select 1'),
      pending: async () => (await pool.query(PENDING_SQL)).rows[0].n,
      close: () => pool.end(),
    };
  },

  async startWorker({ dbUrl, concurrency, origin }) {
    const counter = new pg.Client({ connectionString: dbUrl });
    await counter.connect();
    // the harness's target answers any path; the registration was seeded before its port was known
    await counter.query('update webhook_registrations set target_url = $1', [`${origin}/hook`]);
    Object.assign(process.env, {
      NODE_ENV: 'development',
      DATABASE_URL: dbUrl,
      DISPATCHER_CONCURRENCY: String(concurrency),
      DISPATCHER_PORT: '0',
      SECRET_ENCRYPTION_KEY: env('PLATFORM_SECRET_KEY'),
      DATA_DIR: env('PLATFORM_DATA_DIR'),
      LOG_LEVEL: 'warn',
      ALLOW_PRIVATE_TARGETS: 'true',
    });
    // the bundle starts the dispatcher when it is evaluated (main.ts), as `node dist/main.mjs` does
    await import(pathToFileURL(env('PLATFORM_BUNDLE')).href);
    // Attempt rows committed so far, counted from the last id seen: one dispatcher writes its
    // results one flush at a time, so its attempt ids commit in order and a range scan over the
    // rows since the previous poll (every 20 ms) is exact, where count(*) would scan them all.
    let seen = 0;
    let lastId = 0;
    return {
      async delivered() {
        const { rows } = await counter.query(
          'select count(*)::int as n, max(id)::float8 as last from webhook_attempts where id > $1',
          [lastId],
        );
        seen += rows[0].n;
        if (rows[0].last !== null) lastId = rows[0].last;
        return seen;
      },
      // the worker process exits after this; the dispatcher's SIGTERM handler is not waited for
      stop: () => counter.end(),
    };
  },
};
