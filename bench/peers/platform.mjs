// Our dispatcher as a subject of the peer benchmark (../shared/bench-peers, README "Adding our
// dispatcher to the same run"), in its three modes. `pnpm bench --peers` (bench/peers-mode.ts)
// copies the harness to a temporary folder, puts this file in its peers/ and runs it there, with
// the harness's own pg.
//
// The dispatcher is the production bundle (apps/dispatcher/dist/main.mjs), loaded into the
// harness's worker process as the peers' libraries are (its CPU is the "worker" CPU; no process
// of ours counts as foreign load). It does the work the peers' handler does, by itself: its own
// POST to the harness's target and its own attempt row (webhook_attempts) per delivery.
//
// Enqueue is the API's: every harness webhook is one entity change, written by the API's fan-out
// statement (entity_changes row, webhook, webhook_groups row in the ordered mode, and the NOTIFY
// that wakes the dispatcher on commit). A batch is written by 4 writers at once, each one
// transaction of one statement per change; a single enqueue (latency mode) is one transaction of
// one statement, as an API write. Modes:
//   throughput, latency  an ungrouped registration; change i is entity i + 1
//   ordered              the same registration, grouped (should_group): harness group gK is
//                        entity K + 1, so each harness group is one of our groups
// The webhook's harness identity (id, group, seq) rides in the entity (`harness`), so it is in
// our body; the copy's target reads it from there (our deliveries carry no x-webhook-id).
//
// Environment (set by bench/peers-mode.ts):
//   PLATFORM_BUNDLE        absolute path of apps/dispatcher/dist/main.mjs
//   PLATFORM_TEMPLATE_DB   a migrated database holding one party and one ungrouped registration
//   PLATFORM_SECRET_KEY    base64 key the registration's signing secret is sealed with
//   PLATFORM_DATA_DIR      the dispatcher's DATA_DIR (its development JWT key goes there)
//   PLATFORM_ENQUEUE       JSON { text, names, bindings }: the API's fan-out statement with
//                          positional parameters, their names in order, and the bindings that
//                          are the same for every change (enqueueBindings of packages/db)
import { pathToFileURL } from 'node:url';
import pg from 'pg';
import { ADMIN_URL, withClient } from '../lib/common.mjs';

const env = (name) => {
  const value = process.env[name];
  if (!value) throw new Error(`${name} is not set: run this adapter through pnpm bench --peers`);
  return value;
};

// WebhookState (packages/shared/src/enums.ts): undelivered is any but Successful 3, Aborted 5, Resolved 7
const PENDING_SQL = 'select count(*)::int as n from webhooks where state not in (3, 5, 7)';

const ENQUEUE = JSON.parse(env('PLATFORM_ENQUEUE'));
const PER_CHANGE = ['entityId', 'entity', 'groupKey'];
const unknown = ENQUEUE.names.filter((name) => !(name in ENQUEUE.bindings) && !PER_CHANGE.includes(name));
if (unknown.length > 0)
  throw new Error(`platform: no binding for ${unknown.join(', ')} of the fan-out statement`);

/** The entity a harness webhook changes: its number + 1, or its group's + 1 in the ordered mode. */
function entityIdOf(webhook) {
  return (
    1 +
    Number(webhook.group == null ? webhook.id.slice(webhook.id.lastIndexOf('_') + 1) : webhook.group.slice(1))
  );
}

/**
 * The fan-out statement for one harness webhook: its entity, the harness entity with the
 * webhook's identity, and the group key as groupKeyOf (packages/db) makes it, `<entityName>:<id>`.
 */
function change(webhook) {
  const entityId = entityIdOf(webhook);
  const values = {
    ...ENQUEUE.bindings,
    entityId,
    entity: JSON.stringify({
      ...webhook.entity,
      harness: { id: webhook.id, group: webhook.group, seq: webhook.seq },
    }),
    groupKey: `${ENQUEUE.bindings.entityName}:${entityId}`,
  };
  // a named prepared statement: parsed once per connection (the API sends it unnamed, via knex)
  return { name: 'platform_fan_out', text: ENQUEUE.text, values: ENQUEUE.names.map((name) => values[name]) };
}

/** Writers of a batch: API writes arriving at once, each on its own connection. */
const WRITERS = 4;

export default {
  name: 'platform',
  version: 'dispatcher bundle',

  settings(concurrency) {
    return {
      DISPATCHER_CONCURRENCY: concurrency,
      process: 'the production bundle, imported into the harness worker process',
      enqueueBatch: `${WRITERS} writers at once, each one transaction of the API's fan-out statement per change (NOTIFY on commit)`,
      enqueueOne: "one transaction of the API's fan-out statement, as one API write",
      ordered: 'the registration grouped (should_group); harness group gK = entity K + 1 = one of our groups',
      attemptInsert: "the dispatcher's own webhook_attempts rows (public.attempts is a view of them)",
      body: "our delivery body around the harness webhook's entity, signed (Standard Webhooks)",
    };
  },

  /**
   * The harness made a fresh database; it becomes a clone of the migrated, seeded template, and
   * `attempts` a view of webhook_attempts, so the harness counts our attempt rows. In the ordered
   * mode the registration groups its webhooks, as a user would set it.
   */
  async setup({ dbUrl, mode }) {
    const name = new URL(dbUrl).pathname.slice(1);
    await withClient(ADMIN_URL, async (c) => {
      await c.query(`drop database if exists ${name} with (force)`);
      await c.query(`create database ${name} template ${env('PLATFORM_TEMPLATE_DB')}`);
    });
    await withClient(dbUrl, (c) =>
      c.query(`drop table if exists attempts;
        create view attempts as
          select webhook_id, status_code as status, duration_ms, started_at as created_at from webhook_attempts;
        update webhook_registrations set should_group = ${mode === 'ordered'}`),
    );
  },

  async makeProducer({ dbUrl }) {
    const pool = new pg.Pool({ connectionString: dbUrl, max: WRITERS });
    return {
      // A batch as WRITERS API clients writing at once would leave it: each writer commits its
      // share in one transaction, a statement per change. A writer owns whole entities
      // (entity id modulo WRITERS), so each entity's changes commit in their harness order.
      async enqueueBatch(webhooks) {
        const shares = Array.from({ length: WRITERS }, () => []);
        for (const webhook of webhooks) shares[entityIdOf(webhook) % WRITERS].push(webhook);
        await Promise.all(
          shares
            .filter((share) => share.length > 0)
            .map(async (share) => {
              const client = await pool.connect();
              try {
                await client.query('begin');
                for (const webhook of share) await client.query(change(webhook));
                await client.query('commit');
              } catch (error) {
                await client.query('rollback').catch(() => {});
                throw error;
              } finally {
                client.release();
              }
            }),
        );
      },
      async enqueueOne(webhook) {
        await pool.query(change(webhook));
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
