import { execFile, spawn, type ChildProcess } from 'node:child_process';
import { mkdirSync, rmSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { promisify } from 'node:util';
import { startEmbeddedPostgres, type EmbeddedDatabase } from '../packages/db/src/embedded';
import { createKnex, enqueueEntityChange, migrate, type Knex } from '../packages/db/src/index';
import { freePort } from '../packages/db/src/testing';
import { seedRegistration, TEST_SECRET_KEY } from '../apps/dispatcher/src/testing';
import { startChaosTarget, type Behaviour, type Delivery } from './target';

const ROOT = resolve(import.meta.dirname, '..');
/** The dispatchers' lease: how long a killed dispatcher's webhooks wait before going again. */
const LEASE_MS = 5_000;

export interface ChaosOptions {
  /** Entities changed; each has one group per grouped registration. */
  entities: number;
  /** Changes per entity; each change makes one webhook per registration (4). */
  changesPerEntity: number;
  /** SIGKILLs of a dispatcher, spread over the writing phase. */
  kills: number;
  /** How long the changes are written for (ms); the kills and the Postgres restart fall inside. */
  writeMs: number;
  /** Longest wait for everything to settle after the writes (ms). */
  settleMs: number;
  seed: number;
  log(message: string): void;
}

export interface ChaosReport {
  seed: number;
  webhooks: number;
  groups: number;
  ungrouped: number;
  successful: number;
  failed: number;
  /** Failed webhooks the target did answer 2xx: must be 0. */
  failedDespite2xx: number;
  /** Webhooks missing, not final, or Successful without a 2xx at the target: must be 0. */
  lost: number;
  /** A group's delivery arriving after a later one of that group was answered 2xx: must be 0. */
  orderViolations: number;
  /** Webhooks answered 2xx more than once. */
  duplicates: number;
  /** Duplicates whose first 2xx was not in flight at a kill or the outage: must be 0. */
  unexplainedDuplicates: number;
  deliveries: number;
  kills: number;
  postgresRestarts: number;
  outageMs: number;
  /** /healthz while Postgres was down: 503 ProblemDetails, anything else, no answer within 1 s. */
  apiDuringOutage: { problem503: number; other: number; noAnswer: number };
  /** From Postgres being back to the API answering /healthz 200 again. */
  apiRecoveredMs: number | null;
  /** From Postgres being back to the first delivery attempt recorded after it. */
  dispatchersRecoveredMs: number | null;
  seconds: number;
}

/** What the report promises; empty when every promise held. */
export function brokenPromises(report: ChaosReport, options: { kills: number }): string[] {
  const broken: string[] = [];
  if (report.lost > 0) broken.push(`${report.lost} webhooks lost`);
  if (report.failedDespite2xx > 0) broken.push(`${report.failedDespite2xx} Failed despite a 2xx`);
  if (report.orderViolations > 0) broken.push(`${report.orderViolations} ordering violations`);
  if (report.unexplainedDuplicates > 0) {
    broken.push(`${report.unexplainedDuplicates} duplicates not in flight at a kill or the outage`);
  }
  if (report.kills < options.kills) broken.push(`only ${report.kills} kills`);
  if (report.apiDuringOutage.other > 0 || report.apiDuringOutage.problem503 === 0) {
    broken.push('the API did not answer 503 ProblemDetails while the database was down');
  }
  if (report.apiRecoveredMs === null || report.apiRecoveredMs > 10_000)
    broken.push('the API did not recover within 10 s');
  if (report.dispatchersRecoveredMs === null || report.dispatchersRecoveredMs > 10_000) {
    broken.push('the dispatchers did not recover within 10 s');
  }
  return broken;
}

/** One probe of the API's /healthz: its status (null: no answer within 1 s). */
interface Probe {
  at: number;
  ok: boolean;
  status: number | null;
  problem: boolean;
}

/** mulberry32: a small seeded generator, so a run can be repeated. */
function seeded(seed: number): () => number {
  let state = seed >>> 0;
  return () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/** A node process of the stack; `kill` is SIGKILL, `stop` SIGTERM. */
interface Proc {
  child: ChildProcess;
  exited: Promise<void>;
}

function spawnNode(file: string, env: Record<string, string>, log: (line: string) => void): Proc {
  // TypeScript through tsx; a built bundle (.mjs) by plain Node, as production runs it
  const loader = file.endsWith('.ts') ? ['--import', 'tsx'] : [];
  const child = spawn(process.execPath, [...loader, file], {
    cwd: ROOT,
    env: { ...process.env, ...env },
    stdio: ['ignore', 'ignore', 'pipe'],
  });
  child.stderr!.on('data', (chunk: Buffer) => {
    for (const line of chunk.toString().split('\n')) if (line.trim()) log(line.slice(0, 300));
  });
  const exited = new Promise<void>((done) => child.once('exit', () => done()));
  return { child, exited };
}

async function waitHealthy(url: string, proc: Proc, what: string): Promise<void> {
  const deadline = Date.now() + 60_000;
  for (;;) {
    if (proc.child.exitCode !== null) throw new Error(`${what} exited at start-up`);
    const ok = await fetch(url)
      .then((response) => response.status === 200)
      .catch(() => false);
    if (ok) return;
    if (Date.now() > deadline) throw new Error(`${what} not healthy within 60 s`);
    await sleep(100);
  }
}

/**
 * Runs the chaos scenario on its own Postgres cluster (so it can restart it): the real API, two
 * dispatcher processes and a recording target with four behaviours; changes are written through
 * the real enqueue while dispatchers are SIGKILLed at random moments and Postgres is restarted
 * once; then waits for every webhook to settle and checks what a receiver saw.
 */
export async function runChaos(options: ChaosOptions): Promise<ChaosReport> {
  const { log } = options;
  const random = seeded(options.seed);
  const started = Date.now();
  // under .data like the test cluster: as root, Postgres runs as another user, who cannot enter
  // the private folders mkdtemp makes in /tmp
  const work = join(ROOT, '.data', `chaos-${process.pid}-${options.seed}`);
  mkdirSync(work, { recursive: true, mode: 0o755 });
  const port = await freePort();
  const cleanups: (() => Promise<unknown>)[] = [];
  let cluster: EmbeddedDatabase | undefined = await startEmbeddedPostgres({
    dataDir: join(work, 'pg'),
    port,
  });
  const databaseUrl = cluster.url;
  let knex: Knex = createKnex(databaseUrl, { pool: { max: 4 } });
  const target = await startChaosTarget(random);
  try {
    await migrate(knex);
    const [party] = await knex('parties').insert({ type: 2, name: 'Chaos PMC' }).returning('id');
    const partyId = party.id as number;
    // two grouped registrations (a group per entity each), two ungrouped; all on Property Updated
    const registrations: { behaviour: Behaviour; grouped: boolean }[] = [
      { behaviour: 'ok', grouped: true },
      { behaviour: 'flaky', grouped: true },
      { behaviour: 'hang', grouped: false },
      { behaviour: 'reset', grouped: false },
    ];
    const registrationIds = new Map<Behaviour, number>();
    for (const { behaviour, grouped } of registrations) {
      const { id } = await seedRegistration(knex, {
        partyId,
        targetUrl: target.url(behaviour),
        shouldGroup: grouped,
        // a webhook that fails seven times must not hold its group forever in an unattended run
        shouldGroupContinueAfterFail: true,
        events: [{ entityName: 'Property', type: 2 }],
      });
      registrationIds.set(behaviour, id);
    }

    // the dispatchers run as production runs them: the bundle `pnpm build` makes
    await promisify(execFile)(process.execPath, ['apps/dispatcher/build.mjs'], { cwd: ROOT });
    const common = {
      NODE_ENV: 'development',
      DATABASE_URL: databaseUrl,
      DATA_DIR: join(work, 'data'),
      SECRET_ENCRYPTION_KEY: TEST_SECRET_KEY.toString('base64'),
      LOG_LEVEL: 'error',
      ALLOW_PRIVATE_TARGETS: 'true',
    };
    const apiPort = await freePort();
    const api = spawnNode(
      'apps/api/src/main.ts',
      { ...common, API_PORT: String(apiPort), API_HOST: '127.0.0.1' },
      (l) => log(`api: ${l}`),
    );
    cleanups.push(async () => {
      api.child.kill('SIGKILL');
      await api.exited;
    });
    const healthz = `http://127.0.0.1:${apiPort}/healthz`;
    await waitHealthy(healthz, api, 'the API');

    // the dispatchers: short timeout, lease and retry waits so a run settles in seconds
    let dispatcherNumber = 0;
    const dispatchers = new Set<Proc>();
    const startDispatcher = async (): Promise<void> => {
      for (;;) {
        const statusPort = await freePort();
        const proc = spawnNode(
          'apps/dispatcher/dist/main.mjs',
          {
            ...common,
            DISPATCHER_ID: `chaos-${++dispatcherNumber}`,
            DISPATCHER_PORT: String(statusPort),
            DISPATCHER_CONCURRENCY: '16',
            WEBHOOK_TIMEOUT: '1s',
            DISPATCHER_LEASE: `${LEASE_MS}ms`,
            DISPATCHER_POLL_INTERVAL: '500ms',
            DISPATCHER_SHUTDOWN_TIMEOUT: '2s',
            WEBHOOK_RETRY_SCHEDULE: '0ms,100ms,200ms,400ms,800ms,1s,1s',
          },
          (l) => log(`dispatcher ${dispatcherNumber}: ${l}`),
        );
        try {
          await waitHealthy(`http://127.0.0.1:${statusPort}/healthz`, proc, 'a dispatcher');
          dispatchers.add(proc);
          return;
        } catch {
          proc.child.kill('SIGKILL'); // the database may be down: try again
          await proc.exited;
          await sleep(500);
        }
      }
    };
    cleanups.push(async () => {
      for (const proc of dispatchers) proc.child.kill('SIGKILL');
      await Promise.all([...dispatchers].map((proc) => proc.exited));
    });
    await Promise.all([startDispatcher(), startDispatcher()]);

    // the API's health, sampled all along
    const health: Probe[] = [];
    let probing = true;
    const prober = (async () => {
      while (probing) {
        const at = Date.now();
        const answer = await fetch(healthz, { signal: AbortSignal.timeout(1000) })
          .then((response) => ({
            status: response.status,
            problem: (response.headers.get('content-type') ?? '').startsWith('application/problem+json'),
          }))
          .catch(() => ({ status: null, problem: false }));
        health.push({ at, ok: answer.status === 200, ...answer });
        await sleep(100);
      }
    })();

    const chaosStarted = Date.now();
    // the writer: changes of random entities, one to three per transaction, paused while the
    // database is down (so no commit is in doubt)
    let databaseUp = true;
    const totalChanges = options.entities * options.changesPerEntity;
    const written = new Map<number, number>();
    let changesWritten = 0;
    const writer = (async () => {
      const pace = options.writeMs / totalChanges;
      while (changesWritten < totalChanges) {
        if (!databaseUp) {
          await sleep(50);
          continue;
        }
        const open = [...Array(options.entities).keys()]
          .map((i) => i + 1)
          .filter((id) => (written.get(id) ?? 0) < options.changesPerEntity);
        const entityId = open[Math.floor(random() * open.length)]!;
        const burst = Math.min(
          1 + Math.floor(random() * 3),
          options.changesPerEntity - (written.get(entityId) ?? 0),
        );
        try {
          await knex.transaction(async (trx) => {
            for (let k = 1; k <= burst; k++) {
              const seq = (written.get(entityId) ?? 0) + k;
              await enqueueEntityChange(trx, {
                entityName: 'Property',
                type: 2,
                entityId,
                entity: { id: entityId, seq, name: `Chaos property ${entityId}`, notes: 'x'.repeat(200) },
                initiatorPartyId: partyId,
                initiatorAccountId: null,
              });
            }
          });
          written.set(entityId, (written.get(entityId) ?? 0) + burst);
          changesWritten += burst;
        } catch (error) {
          log(`writer: ${(error as Error).message}; retrying`);
          await sleep(100);
        }
        await sleep(pace * burst);
      }
    })();

    // the chaos: kills at random moments of the writing phase, one Postgres restart in its middle
    const kills: number[] = [];
    const outage = { downAt: 0, upAt: 0 };
    const killer = (async () => {
      const restartAt = chaosStarted + options.writeMs * 0.4;
      let restarted = false;
      for (let i = 0; i < options.kills; i++) {
        await sleep((options.writeMs / (options.kills + 1)) * (0.5 + random()));
        if (!restarted && Date.now() >= restartAt) {
          restarted = true;
          log('restarting Postgres');
          databaseUp = false;
          await knex.destroy();
          outage.downAt = Date.now();
          await cluster!.stop();
          await sleep(2_000);
          cluster = await startEmbeddedPostgres({ dataDir: join(work, 'pg'), port });
          outage.upAt = Date.now();
          knex = createKnex(databaseUrl, { pool: { max: 4 } });
          databaseUp = true;
        }
        const victims = [...dispatchers];
        const victim = victims[Math.floor(random() * victims.length)]!;
        dispatchers.delete(victim);
        kills.push(Date.now());
        victim.child.kill('SIGKILL');
        await victim.exited;
        log(`killed a dispatcher (${kills.length})`);
        await startDispatcher();
      }
      if (!restarted) throw new Error('the run ended before the Postgres restart; lengthen writeMs');
    })();
    await Promise.all([writer, killer]);
    log(`written ${changesWritten} changes; waiting for the webhooks to settle`);

    const expected = totalChanges * registrations.length;
    const deadline = Date.now() + options.settleMs;
    for (;;) {
      const settled = Number((await knex('webhooks').whereIn('state', [3, 4, 5]).count({ n: '*' }))[0]!.n);
      if (Number(settled) >= expected) break;
      if (Date.now() > deadline) {
        log(`not settled: ${settled} of ${expected}`);
        break;
      }
      await sleep(250);
    }
    probing = false;
    await prober;

    return await report({
      knex,
      options,
      expected,
      registrationIds,
      deliveries: target.deliveries,
      kills,
      outage,
      health,
      started,
    });
  } finally {
    for (const cleanup of cleanups.reverse()) await cleanup().catch(() => {});
    await knex.destroy().catch(() => {});
    await target.close();
    await cluster?.stop().catch(() => {});
    rmSync(work, { recursive: true, force: true });
  }
}

async function report(input: {
  knex: Knex;
  options: ChaosOptions;
  expected: number;
  registrationIds: Map<Behaviour, number>;
  deliveries: readonly Delivery[];
  kills: number[];
  outage: { downAt: number; upAt: number };
  health: Probe[];
  started: number;
}): Promise<ChaosReport> {
  const { knex, deliveries, kills, outage } = input;
  const rows = (await knex('webhooks').select('id', 'registration_id', 'state', 'group_key')) as {
    id: number;
    registration_id: number;
    state: number;
    group_key: string | null;
  }[];
  const answered2xx = new Map<number, Delivery[]>();
  for (const delivery of deliveries) {
    if (delivery.status === 200)
      answered2xx.set(delivery.webhookId, [...(answered2xx.get(delivery.webhookId) ?? []), delivery]);
  }
  const successful = rows.filter((row) => row.state === 3);
  const failed = rows.filter((row) => row.state === 4);
  const lost =
    Math.max(0, input.expected - rows.length) +
    rows.filter((row) => ![3, 4].includes(row.state)).length +
    successful.filter((row) => !answered2xx.has(row.id)).length;

  // per group (registration, entity), in arrival order: nothing older after a later 2xx
  let orderViolations = 0;
  const newest2xx = new Map<string, number>();
  for (const delivery of deliveries) {
    if (delivery.behaviour !== 'ok' && delivery.behaviour !== 'flaky') continue; // the grouped ones
    const group = `${delivery.behaviour}:${delivery.entityId}`;
    if (delivery.seq < (newest2xx.get(group) ?? 0)) orderViolations++;
    if (delivery.status === 200) newest2xx.set(group, Math.max(delivery.seq, newest2xx.get(group) ?? 0));
  }

  // a duplicate is explained when its first 2xx came at most a lease before a kill, or around the
  // outage (results could not be recorded, so the lease ran out and it went again)
  const explained = (at: number) =>
    kills.some((kill) => at <= kill && at >= kill - LEASE_MS - 1_000) ||
    (at >= outage.downAt - LEASE_MS - 1_000 && at <= outage.upAt + LEASE_MS);
  const duplicates = [...answered2xx.values()].filter((list) => list.length > 1);
  const unexplained = duplicates.filter((list) => !explained(list[0]!.receivedAt));
  for (const list of unexplained) {
    const at = list[0]!.receivedAt;
    input.options.log(
      `unexplained duplicate of webhook ${list[0]!.webhookId} (${list[0]!.behaviour}): 2xx at ${list
        .map((d) => d.receivedAt - input.started)
        .join(', ')} ms; kills at ${kills.map((k) => k - at).join(', ')} ms from the first; outage ${
        outage.downAt - at
      }…${outage.upAt - at} ms from it`,
    );
  }
  const unexplainedDuplicates = unexplained.length;

  const apiBack = input.health.find((sample) => sample.at >= outage.upAt && sample.ok);
  // while Postgres was down (past the moment its shutdown began), what /healthz answered
  const down = input.health.filter(
    (sample) => sample.at > outage.downAt + 100 && sample.at + 1000 < outage.upAt,
  );
  const apiDuringOutage = {
    problem503: down.filter((sample) => sample.status === 503 && sample.problem).length,
    other: down.filter((sample) => sample.status !== null && !(sample.status === 503 && sample.problem))
      .length,
    noAnswer: down.filter((sample) => sample.status === null).length,
  };
  const first = (
    (await knex('webhook_attempts')
      .where('started_at', '>=', new Date(outage.upAt))
      .min({ first: 'started_at' })) as { first: Date | null }[]
  )[0]!.first;
  return {
    seed: input.options.seed,
    webhooks: rows.length,
    groups: new Set(
      rows.filter((row) => row.group_key !== null).map((row) => `${row.registration_id}:${row.group_key}`),
    ).size,
    ungrouped: rows.filter((row) => row.group_key === null).length,
    successful: successful.length,
    failed: failed.length,
    failedDespite2xx: failed.filter((row) => answered2xx.has(row.id)).length,
    lost,
    orderViolations,
    duplicates: duplicates.length,
    unexplainedDuplicates,
    deliveries: deliveries.length,
    kills: kills.length,
    postgresRestarts: outage.upAt > 0 ? 1 : 0,
    outageMs: outage.upAt - outage.downAt,
    apiDuringOutage,
    apiRecoveredMs: apiBack ? apiBack.at - outage.upAt : null,
    dispatchersRecoveredMs: first ? first.getTime() - outage.upAt : null,
    seconds: Math.round((Date.now() - input.started) / 100) / 10,
  };
}
