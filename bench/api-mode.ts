import type { Knex } from '@platform/db';
import { quantile } from '@platform/testkit';
import type { BenchContext } from './context';
import { createProperties, seedBenchAccount, signIn, type ApiClient } from './api-client';
import { round } from './drain';
import { startApi, startDispatcher } from './stack';

/** Registrations subscribed to Property Updated: each PATCH fans out to this many webhooks. */
const REGISTRATIONS = 10;
const PROPERTIES = 200;
const WARMUP_SECONDS = 1;

interface Phase {
  perSecond: number;
  p50Ms: number;
  p95Ms: number;
  p99Ms: number;
  requests: number;
  errors: number;
}

/**
 * `clients` loops, each sending `next()`'s request as soon as its previous one was answered, for
 * `seconds` (after an untimed warm-up); answers the rate and latency quantiles of what they sent.
 */
async function closedLoop(
  client: ApiClient,
  clients: number,
  seconds: number,
  next: () => Parameters<ApiClient['send']>,
): Promise<Phase> {
  const run = async (ms: number, record: boolean) => {
    const latencies: number[] = [];
    let errors = 0;
    const until = performance.now() + ms;
    await Promise.all(
      Array.from({ length: clients }, async () => {
        while (performance.now() < until) {
          const sent = performance.now();
          const { status } = await client.send(...next());
          if (!record) continue;
          latencies.push(performance.now() - sent);
          if (status >= 300) errors++;
        }
      }),
    );
    return { latencies, errors };
  };
  await run(WARMUP_SECONDS * 1000, false);
  const started = performance.now();
  const { latencies, errors } = await run(seconds * 1000, true);
  const elapsed = (performance.now() - started) / 1000;
  latencies.sort((a, b) => a - b);
  return {
    perSecond: round(latencies.length / elapsed),
    p50Ms: round(quantile(latencies, 0.5), 2),
    p95Ms: round(quantile(latencies, 0.95), 2),
    p99Ms: round(quantile(latencies, 0.99), 2),
    requests: latencies.length,
    errors,
  };
}

/**
 * The API mode: the real API and dispatcher on a fresh database. A PMC account registers the
 * target 10 times for Property Updated and creates 200 properties; then 32 clients, each in a
 * closed loop over one keep-alive pool, GET /api/properties (the first page of 20) for `seconds`,
 * then PATCH a random property for `seconds`. Every PATCH writes the property, its entity change
 * and 10 webhooks in one transaction, which the running dispatcher delivers meanwhile.
 */
export async function apiMode(context: BenchContext, options: { seconds: number; clients: number }) {
  const { cluster, target, log } = context;
  const db = await cluster.create('api');
  const account = await seedBenchAccount(db.knex);
  await target.reset(true);
  const stack = context.stack(db.url);
  const [api, dispatcher] = await Promise.all([startApi(stack), startDispatcher(stack)]);
  const client = await signIn(api.url, account, options.clients);
  try {
    for (let i = 0; i < REGISTRATIONS; i++) {
      await client.call('POST', '/api/webhook-registrations', {
        targetUrl: target.url,
        enabledEvents: [{ entityName: 'Property', type: 2 }],
        targetAuthorization: { type: 0 },
      });
    }
    const properties = await createProperties(client.call, PROPERTIES);
    log(`api: ${options.clients} clients, GET /api/properties for ${options.seconds} s`);
    const get = await closedLoop(client, options.clients, options.seconds, () => [
      'GET',
      '/api/properties?PageSize=20',
    ]);
    log(`api: ${options.clients} clients, PATCH /api/properties/{id} for ${options.seconds} s`);
    const webhooksBefore = await countWebhooks(db.knex);
    let seq = 0;
    const patch = await closedLoop(client, options.clients, options.seconds, () => [
      'PATCH',
      `/api/properties/${properties[Math.floor(Math.random() * properties.length)]}`,
      { notes: `api bench ${++seq}` },
    ]);
    // every successful PATCH (the warm-up's too) wrote exactly one webhook per registration
    const webhooks = (await countWebhooks(db.knex)) - webhooksBefore;
    const patches = (await db.knex('entity_changes').where({ type: 2 }).count({ n: '*' }))[0]!.n as number;
    const rssMb = await dispatcher.stop();
    return {
      mode: 'api',
      clients: options.clients,
      seconds: options.seconds,
      getPropertiesPerSecond: get.perSecond,
      getP50Ms: get.p50Ms,
      getP95Ms: get.p95Ms,
      getP99Ms: get.p99Ms,
      patchPerSecond: patch.perSecond,
      patchP50Ms: patch.p50Ms,
      patchP95Ms: patch.p95Ms,
      patchP99Ms: patch.p99Ms,
      webhooksPerPatch: patches > 0 ? round(webhooks / patches, 2) : null,
      errors: get.errors + patch.errors,
      dispatcherRssMb: rssMb,
      database: cluster.server,
    };
  } finally {
    await client.close();
    await api.child.stop();
    await dispatcher.child.stop();
  }
}

async function countWebhooks(knex: Knex): Promise<number> {
  return Number((await knex('webhooks').count({ n: '*' }))[0]!.n);
}
