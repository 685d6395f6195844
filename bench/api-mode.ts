import { isDeepStrictEqual } from 'node:util';
import type { Knex } from '@platform/db';
import { quantile } from '@platform/testkit';
import type { BenchContext } from './context';
import { connect, createProperties, seedBenchAccount, signIn, type ApiClient } from './api-client';
import { round } from './drain';
import { machineBusyMs, processCpuMs } from './processes';
import { startApi, startBareApi, startDispatcher } from './stack';

/** Registrations subscribed to Property Updated: each PATCH fans out to this many webhooks. */
const REGISTRATIONS = 10;
const PROPERTIES = 200;
/**
 * Untimed load before each phase, the same for the API and the bare handler: a server runs warm.
 * V8 takes tens of seconds to optimize the API's layers (routing, validation, knex, `present`)
 * where the bare handler's few functions are optimized within a second, so a short warm-up
 * measures the API's compilation: after 1 s, GET cost the API 0.668 ms of CPU (bare 0.300) and
 * PATCH 1.173 (bare 0.527); after 20 s, 0.552 (0.262) and 1.088 (0.472) (one run each,
 * 2026-12-03, Postgres 15). 10 s per phase, so `--api` takes about 40 s longer than with 1 s.
 */
const WARMUP_SECONDS = 10;
/** The read the API mode measures: the first page of 20 properties. */
export const LIST_REQUEST: Parameters<ApiClient['send']> = ['GET', '/api/properties?PageSize=20'];

export interface Phase {
  perSecond: number;
  /** CPU milliseconds (user + system) the serving process spent per request. */
  cpuMsPerRequest: number;
  /** CPU milliseconds the whole machine spent per request (every process: client, database, …). */
  machineCpuMsPerRequest: number;
  p50Ms: number;
  p95Ms: number;
  p99Ms: number;
  requests: number;
  errors: number;
}

/**
 * `clients` loops, each sending `next()`'s request as soon as its previous one was answered, for
 * `seconds` (after an untimed warm-up); answers the rate and latency quantiles of what they sent,
 * and the CPU time per request of the process `pid` (the server) and of the machine.
 */
export async function closedLoop(
  pid: number,
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
  const [cpuBefore, machineBefore] = [await processCpuMs(pid), await machineBusyMs()];
  const started = performance.now();
  const { latencies, errors } = await run(seconds * 1000, true);
  const elapsed = (performance.now() - started) / 1000;
  const [cpuAfter, machineAfter] = [await processCpuMs(pid), await machineBusyMs()];
  latencies.sort((a, b) => a - b);
  return {
    perSecond: round(latencies.length / elapsed),
    cpuMsPerRequest: round((cpuAfter - cpuBefore) / latencies.length, 3),
    machineCpuMsPerRequest: round((machineAfter - machineBefore) / latencies.length, 3),
    p50Ms: round(quantile(latencies, 0.5), 2),
    p95Ms: round(quantile(latencies, 0.95), 2),
    p99Ms: round(quantile(latencies, 0.99), 2),
    requests: latencies.length,
    errors,
  };
}

/**
 * What the API mode's requests work on, made through the API by `client`'s PMC account: 10
 * registrations of `targetUrl` for Property Updated, and 200 properties, whose ids it answers.
 */
export async function seedApiWorkload(client: ApiClient, targetUrl: string): Promise<number[]> {
  for (let i = 0; i < REGISTRATIONS; i++) {
    await client.call('POST', '/api/webhook-registrations', {
      targetUrl,
      enabledEvents: [{ entityName: 'Property', type: 2 }],
      targetAuthorization: { type: 0 },
    });
  }
  return createProperties(client.call, PROPERTIES);
}

/**
 * The API mode: the real API and dispatcher on a fresh database, against the bare-handler baseline
 * (bench/bare-api.ts: node:http and pg, the same SQL, no framework layers) on the same database.
 * A PMC account registers the target 10 times for Property Updated and creates 200 properties;
 * then 32 clients, each in a closed loop over one keep-alive pool, GET /api/properties (the first
 * page of 20) for `seconds` from the API, then from the baseline, then PATCH a random property
 * for `seconds` on the API, then on the baseline. Every PATCH writes the property, its entity
 * change and 10 webhooks in one transaction, which the running dispatcher delivers meanwhile.
 * The baseline's answers are checked against the API's first (`checkBaseline`), so a broken
 * baseline fails the run instead of flattering the ratios. Each phase also reports the CPU time per
 * request of the serving process and of the machine (`…CpuMs`, `…MachineCpuMs`).
 */
export async function apiMode(context: BenchContext, options: { seconds: number; clients: number }) {
  const { cluster, target, log } = context;
  const db = await cluster.create('api');
  const account = await seedBenchAccount(db.knex);
  await target.reset(true);
  const stack = context.stack(db.url);
  const [api, dispatcher] = await Promise.all([startApi(stack), startDispatcher(stack)]);
  // after the API: it generates the signing key the baseline verifies tokens with
  const bareApi = await startBareApi(stack);
  const client = await signIn(api.url, account, options.clients);
  const bare = connect(bareApi.url, options.clients, client.token);
  try {
    const properties = await seedApiWorkload(client, target.url);
    await checkBaseline(db.knex, client, bare, properties[0]!);
    const list = () => LIST_REQUEST;
    const pidOf = (to: ApiClient) => (to === client ? api : bareApi).child.process.pid!;
    const getPhase = async (name: string, to: ApiClient) => {
      log(`api: ${options.clients} clients, GET /api/properties on the ${name} for ${options.seconds} s`);
      return closedLoop(pidOf(to), to, options.clients, options.seconds, list);
    };
    let seq = 0;
    const patchPhase = async (name: string, to: ApiClient) => {
      log(
        `api: ${options.clients} clients, PATCH /api/properties/{id} on the ${name} for ${options.seconds} s`,
      );
      const webhooksBefore = await countWebhooks(db.knex);
      const patchesBefore = await countPatches(db.knex);
      const phase = await closedLoop(pidOf(to), to, options.clients, options.seconds, () => [
        'PATCH',
        `/api/properties/${properties[Math.floor(Math.random() * properties.length)]}`,
        { notes: `${name} bench ${++seq}` },
      ]);
      // every successful PATCH (the warm-up's too) wrote exactly one webhook per registration
      const webhooks = (await countWebhooks(db.knex)) - webhooksBefore;
      const patches = (await countPatches(db.knex)) - patchesBefore;
      return { ...phase, webhooksPerPatch: patches > 0 ? round(webhooks / patches, 2) : null };
    };
    // interleaved: each route on the API, then at once on the baseline
    const get = await getPhase('API', client);
    const bareGet = await getPhase('bare handler', bare);
    const patch = await patchPhase('API', client);
    const barePatch = await patchPhase('bare handler', bare);
    const rssMb = await dispatcher.stop();
    return {
      mode: 'api',
      clients: options.clients,
      seconds: options.seconds,
      getPropertiesPerSecond: get.perSecond,
      getP50Ms: get.p50Ms,
      getP95Ms: get.p95Ms,
      getP99Ms: get.p99Ms,
      getCpuMs: get.cpuMsPerRequest,
      getMachineCpuMs: get.machineCpuMsPerRequest,
      patchPerSecond: patch.perSecond,
      patchP50Ms: patch.p50Ms,
      patchP95Ms: patch.p95Ms,
      patchP99Ms: patch.p99Ms,
      patchCpuMs: patch.cpuMsPerRequest,
      patchMachineCpuMs: patch.machineCpuMsPerRequest,
      webhooksPerPatch: patch.webhooksPerPatch,
      errors: get.errors + patch.errors,
      bareGetPerSecond: bareGet.perSecond,
      bareGetP50Ms: bareGet.p50Ms,
      bareGetP99Ms: bareGet.p99Ms,
      bareGetCpuMs: bareGet.cpuMsPerRequest,
      bareGetMachineCpuMs: bareGet.machineCpuMsPerRequest,
      barePatchPerSecond: barePatch.perSecond,
      barePatchP50Ms: barePatch.p50Ms,
      barePatchP99Ms: barePatch.p99Ms,
      barePatchCpuMs: barePatch.cpuMsPerRequest,
      barePatchMachineCpuMs: barePatch.machineCpuMsPerRequest,
      bareWebhooksPerPatch: barePatch.webhooksPerPatch,
      bareErrors: bareGet.errors + barePatch.errors,
      // the API's rate as a share of the bare handler's, per route (the target: ≥ 0.6)
      getApiVsBare: round(get.perSecond / bareGet.perSecond, 2),
      patchApiVsBare: round(patch.perSecond / barePatch.perSecond, 2),
      dispatcherRssMb: rssMb,
      database: cluster.server,
    };
  } finally {
    await client.close();
    await bare.close();
    await api.child.stop();
    await bareApi.child.stop();
    await dispatcher.child.stop();
  }
}

/**
 * Fails the run unless the baseline answers as the API does: the same first page (deep-equal), and
 * a PATCH of `propertyId` that answers 200 with the property the API then reads, and writes one
 * webhook per registration.
 */
async function checkBaseline(knex: Knex, api: ApiClient, bare: ApiClient, propertyId: number): Promise<void> {
  const path = '/api/properties?PageSize=20';
  const [fromApi, fromBare] = [await api.call('GET', path), await bare.send('GET', path)];
  if (fromBare.status !== 200 || !isDeepStrictEqual(fromBare.body, fromApi)) {
    throw new Error(`the bare handler's GET ${path} differs from the API's: ${JSON.stringify(fromBare)}`);
  }
  const webhooksBefore = await countWebhooks(knex);
  const patched = await bare.send('PATCH', `/api/properties/${propertyId}`, { notes: 'bare handler check' });
  const read = await api.call('GET', `/api/properties/${propertyId}`);
  const webhooks = (await countWebhooks(knex)) - webhooksBefore;
  if (
    patched.status !== 200 ||
    read.notes !== 'bare handler check' ||
    !isDeepStrictEqual(patched.body, read)
  ) {
    throw new Error(`the bare handler's PATCH answered ${patched.status} ${JSON.stringify(patched.body)}`);
  }
  if (webhooks !== REGISTRATIONS) {
    throw new Error(`the bare handler's PATCH wrote ${webhooks} webhooks, not ${REGISTRATIONS}`);
  }
}

async function countPatches(knex: Knex): Promise<number> {
  return Number((await knex('entity_changes').where({ type: 2 }).count({ n: '*' }))[0]!.n);
}

async function countWebhooks(knex: Knex): Promise<number> {
  return Number((await knex('webhooks').count({ n: '*' }))[0]!.n);
}
