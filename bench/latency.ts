import { setTimeout as sleep } from 'node:timers/promises';
import type { Knex } from '@platform/db';
import { eventually, quantile } from '@platform/testkit';
import type { BenchContext } from './context';
import { round } from './drain';
import { createProperties, seedBenchAccount, signIn } from './api-client';
import { ENTITY_BYTES } from './seed';
import { startApi, startDispatcher } from './stack';
import type { DeliveryRecord } from './target';

/** Properties the writes rotate over, so consecutive writes do not queue on one row lock. */
const PROPERTIES = 20;
/** Writes before the measured ones, at the same rate: connections, JIT, caches. */
const WARMUP_SECONDS = 1;

const summary = (values: number[]) => {
  const sorted = [...values].sort((a, b) => a - b);
  return {
    p50Ms: round(quantile(sorted, 0.5), 2),
    p95Ms: round(quantile(sorted, 0.95), 2),
    p99Ms: round(quantile(sorted, 0.99), 2),
    maxMs: round(sorted[sorted.length - 1] ?? NaN, 2),
  };
};

/**
 * The commit time (epoch ms, the server's clock: the same machine's) of each PATCH's change, by
 * its `seq`, when the server records commit timestamps (`track_commit_timestamp`); else null.
 */
async function commitTimes(knex: Knex): Promise<Map<number, number> | null> {
  const { rows: setting } = await knex.raw<{ rows: { on: boolean }[] }>(
    `select current_setting('track_commit_timestamp') = 'on' as on`,
  );
  if (!setting[0]!.on) return null;
  const { rows } = await knex.raw<{ rows: { seq: number; at: number }[] }>(
    `select substring(entity->>'notes' from '^seq=([0-9]+);')::int as seq,
            extract(epoch from pg_xact_commit_timestamp(xmin)) * 1000 as at
       from entity_changes
      where type = 2`,
  );
  return new Map(rows.map((row) => [row.seq, Number(row.at)]));
}

/**
 * The latency mode: the real API and dispatcher; a PMC account logs in, registers the target for
 * Property Updated, and PATCHes properties at a steady `rate` for `seconds` (after a 1 s warm-up,
 * not counted). Each write's latency is the target's receipt minus the commit of the writing
 * transaction, where the server records commit timestamps (the embedded cluster does); elsewhere
 * minus the entity's `lastModified`, stamped inside the transaction (an upper bound: it includes
 * the rest of the transaction). The receipt minus the arrival of the PATCH response (after the
 * commit, so a lower bound, negative when the target heard first) is reported beside it.
 */
export async function latencyMode(context: BenchContext, options: { rate: number; seconds: number }) {
  const { cluster, target, log } = context;
  const db = await cluster.create('latency');
  const account = await seedBenchAccount(db.knex);

  log('latency: starting the API and the dispatcher');
  await target.reset(true);
  const stack = context.stack(db.url);
  const [api, dispatcher] = await Promise.all([startApi(stack), startDispatcher(stack)]);
  const client = await signIn(api.url, account, 32);
  const call = client.call;
  try {
    await call('POST', '/api/webhook-registrations', {
      targetUrl: target.url,
      enabledEvents: [{ entityName: 'Property', type: 2 }],
      targetAuthorization: { type: 0 },
    });
    const properties = await createProperties(call, PROPERTIES);

    const warmup = Math.round(options.rate * WARMUP_SECONDS);
    const total = warmup + Math.round(options.rate * options.seconds);
    log(`latency: ${total} PATCHes at ${options.rate}/s (the first ${warmup} a warm-up)`);
    // notes pad the entity to about the throughput mode's size
    const padding = 'x'.repeat(ENTITY_BYTES - 300);
    const responded = new Map<number, number>();
    const apiMs: number[] = [];
    const failures: string[] = [];
    const writes: Promise<void>[] = [];
    const started = performance.now();
    for (let seq = 1; seq <= total; seq++) {
      // open loop: each write leaves on its schedule, whether or not earlier ones have answered
      const wait = started + ((seq - 1) * 1000) / options.rate - performance.now();
      if (wait > 0) await sleep(wait);
      const sent = performance.now();
      writes.push(
        call('PATCH', `/api/properties/${properties[seq % PROPERTIES]}`, {
          notes: `seq=${seq};${padding}`,
        }).then(
          () => {
            responded.set(seq, performance.timeOrigin + performance.now());
            if (seq > warmup) apiMs.push(performance.now() - sent);
          },
          (error: Error) => void failures.push(error.message),
        ),
      );
    }
    await Promise.all(writes);
    const elapsed = (performance.now() - started) / 1000;
    if (failures.length > 0) throw new Error(`${failures.length} writes failed, e.g. ${failures[0]}`);
    await eventually(async () => (await target.stats()).received >= total, {
      timeoutMs: context.timeoutMs,
      what: `the target did not receive ${total} deliveries`,
    });
    const records = await target.records<DeliveryRecord[]>();
    const measured = records.filter(([, , , seq]) => seq > warmup);
    const fromCommit = measured.map(([, receivedAt, , , lastModified]) => receivedAt - lastModified);
    const fromResponse = measured.map(([, receivedAt, , seq]) => receivedAt - responded.get(seq)!);
    // with track_commit_timestamp on (the embedded cluster), each change's commit time itself
    const committed = await commitTimes(db.knex);
    const fromCommitTimestamp = committed
      ? measured.map(([, receivedAt, , seq]) => receivedAt - committed.get(seq)!)
      : null;
    const rssMb = await dispatcher.stop();
    return {
      mode: 'latency',
      webhooks: measured.length,
      ratePerSecond: options.rate,
      achievedPerSecond: round((total - warmup) / (elapsed - WARMUP_SECONDS), 1),
      // commit → receipt: from the commit timestamp where the server records them, else from the
      // entity's lastModified (an upper bound)
      method: fromCommitTimestamp ? 'commit timestamp' : 'lastModified',
      ...summary(fromCommitTimestamp ?? fromCommit),
      ...(fromCommitTimestamp ? { fromLastModified: summary(fromCommit) } : {}),
      // commit → receipt, measured from the PATCH response's arrival (a lower bound)
      fromResponse: summary(fromResponse),
      // the PATCH round trip seen by the client
      apiPatch: summary(apiMs),
      rssMb,
      database: cluster.server,
    };
  } finally {
    await client.close();
    await api.child.stop();
    await dispatcher.child.stop();
  }
}
