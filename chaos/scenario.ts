import { mkdirSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { startEmbeddedPostgres, type EmbeddedDatabase } from '@platform/db/embedded';
import { bucketPartition, buildBucketLayout } from '@platform/db/bucket-layout';
import { createKnex, enqueueEntityChange, migrate, type Knex } from '@platform/db';
import { CLAIMABLE_WEBHOOK_STATES, WebhookState } from '@platform/shared';
import {
  type DispatcherProcess,
  freePort,
  ROOT,
  seedParty,
  seedRegistration,
  spawnNode,
  type SpawnOptions,
  startDispatcher as startTestDispatcher,
  TEST_SECRET_KEY,
  waitForHealthy,
} from '@platform/testkit';
import { neverAnswers2xx, startChaosTarget, type Behaviour, type Delivery } from './target';

const { Successful, Failed, Aborted } = WebhookState;

/** The dispatchers' lease: how long a killed dispatcher's webhooks wait before going again. */
const LEASE_MS = 5_000;
/** The dispatchers' retry schedule, shortened so a webhook's seven tries take about 3.5 s. */
const RETRY_SCHEDULE = '0ms,100ms,200ms,400ms,800ms,1s,1s';
const TRIES = 7;
/** How soon after Postgres is back the API and each dispatcher must answer /healthz 200 again. */
const RECOVERY_LIMIT_MS = 10_000;
/** No kill in the first seconds after Postgres is back (see the killer). */
const QUIET_AFTER_RESTART_MS = 3_000;
/**
 * Timing slack on a busy 2-core machine: how late the target's event loop may record a request
 * that was already under way, or how long a flush of results may be in progress (with the
 * linger before it, DISPATCHER_FLUSH_LINGER: 20 ms).
 */
const SLACK_MS = 1_000;

/** Partitions per queue table on the `buckets` layout (the shards of the emulation). */
const BUCKET_PARTITIONS = 8;
/** Tenants (parties), each with the four registrations below; on `buckets`, in four partitions. */
const TENANTS = 4;

/** The four registrations, all subscribed to Property Updated: two grouped, two not. */
const REGISTRATIONS: readonly { behaviour: Behaviour; grouped: boolean }[] = [
  { behaviour: 'ok', grouped: false },
  { behaviour: 'flaky', grouped: false },
  // grouped, so per-group order is checked through timeouts and dropped connections
  { behaviour: 'hang', grouped: true },
  { behaviour: 'reset', grouped: true },
];

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
  /**
   * The database's layout: `flat`, as one database runs, or `buckets`, the Citus emulation's
   * (`@platform/db/bucket-layout`: the queue tables hash-partitioned by tenant bucket, built on
   * the migrated database before anything is written, so every row comes from the real writes).
   */
  layout?: 'flat' | 'buckets';
  log(message: string): void;
}

export interface ChaosReport {
  seed: number;
  /** The database's layout it ran on (`ChaosOptions.layout`). */
  layout: 'flat' | 'buckets';
  /** The tables the webhooks ended in: 1 on `flat`, the partitions of `webhooks` on `buckets`. */
  webhookTables: number;
  webhooks: number;
  groups: number;
  ungrouped: number;
  successful: number;
  failed: number;
  /** Webhooks the target never answers 2xx (`neverAnswers2xx`): exactly these must end Failed. */
  expectedFailed: number;
  /**
   * Final webhooks in the wrong final state: Failed although the target would answer them 2xx,
   * not Failed although it never does, or Failed before the seventh try. Must be 0.
   */
  wrongOutcomes: number;
  /** Webhooks missing, not final, or Successful without a 2xx at the target: must be 0. */
  lost: number;
  /** Webhooks whose counted tries (`attempt_count`) differ from their attempt rows: must be 0. */
  triesWithoutAttempt: number;
  /** Attempts recorded `interrupted`: tries whose lease ran out without a result (kills, the outage). */
  interruptedAttempts: number;
  /** Attempts of a group arriving with a lower sequence number than an earlier attempt's: must be 0. */
  orderViolations: number;
  /** The attempts of grouped webhooks the target received (what the ordering check read). */
  groupedDeliveries: number;
  /** Webhooks answered 2xx more than once. */
  duplicates: number;
  /** Of those, leased to a dispatcher when it was killed, with their first 2xx before the kill. */
  duplicatesAtKills: number;
  /** Of those (and not at a kill), with their first 2xx inside the outage window. */
  duplicatesAtOutage: number;
  /** The other duplicates: must be 0. */
  unexplainedDuplicates: number;
  /** Webhooks leased to the killed dispatchers at their kills (all kills together). */
  leasedAtKills: number;
  deliveries: number;
  kills: number;
  postgresRestarts: number;
  outageMs: number;
  /** The outage window for duplicates, in ms from the moment Postgres was stopped. */
  outageWindowMs: [number, number];
  /** /healthz while Postgres was down: 503 ProblemDetails, anything else, no answer within 1 s. */
  apiDuringOutage: { problem503: number; other: number; noAnswer: number };
  /** From Postgres being back to the API answering /healthz 200 again. */
  apiRecoveredMs: number | null;
  /**
   * For each dispatcher that ran through the outage, from Postgres being back to its /healthz
   * answering 200 again (its LISTEN connection and claim loop back); null: not seen.
   */
  dispatchersRecoveredMs: (number | null)[];
  seconds: number;
  /** What broke, a few lines of each kind naming the webhooks (empty when nothing did). */
  details: string[];
}

/** The totals the run must have produced. */
export interface ChaosExpectations {
  kills: number;
  webhooks: number;
  groups: number;
}

/** What the report promises; empty when every promise held. */
export function brokenPromises(report: ChaosReport, expected: ChaosExpectations): string[] {
  const broken: string[] = [];
  if (report.webhooks !== expected.webhooks) {
    broken.push(`${report.webhooks} webhooks, not ${expected.webhooks}`);
  }
  if (report.groups !== expected.groups) broken.push(`${report.groups} groups, not ${expected.groups}`);
  if (report.lost > 0) broken.push(`${report.lost} webhooks lost`);
  if (report.triesWithoutAttempt > 0) {
    broken.push(`${report.triesWithoutAttempt} webhooks with counted tries that have no attempt row`);
  }
  if (report.expectedFailed === 0)
    broken.push('no webhook the target never answers 2xx: Failed went unchecked');
  if (report.wrongOutcomes > 0) broken.push(`${report.wrongOutcomes} webhooks Successful or Failed wrongly`);
  if (report.orderViolations > 0) broken.push(`${report.orderViolations} ordering violations`);
  if (report.unexplainedDuplicates > 0) {
    broken.push(`${report.unexplainedDuplicates} duplicates not in flight at a kill or the outage`);
  }
  if (report.kills < expected.kills) broken.push(`only ${report.kills} kills`);
  if (report.postgresRestarts !== 1) broken.push('Postgres was not restarted');
  if (report.apiDuringOutage.other > 0 || report.apiDuringOutage.problem503 === 0) {
    broken.push('the API did not answer 503 ProblemDetails while the database was down');
  }
  if (report.apiRecoveredMs === null || report.apiRecoveredMs > RECOVERY_LIMIT_MS) {
    broken.push('the API did not recover within 10 s');
  }
  if (report.dispatchersRecoveredMs.length === 0) broken.push('no dispatcher ran through the outage');
  const slow = report.dispatchersRecoveredMs.filter((ms) => ms === null || ms > RECOVERY_LIMIT_MS);
  if (slow.length > 0) broken.push(`${slow.length} dispatchers did not recover within 10 s`);
  return broken;
}

/** One probe of a /healthz: its status (null: no answer within 1 s). */
interface Probe {
  at: number;
  ok: boolean;
  status: number | null;
  problem: boolean;
}

async function probe(url: string): Promise<Probe> {
  const at = Date.now();
  const answer = await fetch(url, { signal: AbortSignal.timeout(1000) })
    .then((response) => ({
      status: response.status,
      problem: (response.headers.get('content-type') ?? '').startsWith('application/problem+json'),
    }))
    .catch(() => ({ status: null, problem: false }));
  return { at, ok: answer.status === 200, ...answer };
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

/** A dispatcher process: its DISPATCHER_ID (what its leases carry) and its /healthz. */
interface DispatcherProc extends DispatcherProcess {
  id: string;
  healthz: string;
}

/** A SIGKILL: when, whom, and the webhooks leased to the victim right after it died. */
interface Kill {
  at: number;
  dispatcherId: string;
  leased: number[];
}

/** Hands each line a process writes to stderr to `log`, shortened (its stdout is not read). */
function stderrLines(log: (line: string) => void): SpawnOptions['onOutput'] {
  return (chunk, stream) => {
    if (stream !== 'stderr') return;
    for (const line of chunk.split('\n')) if (line.trim()) log(line.slice(0, 300));
  };
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
    if (options.layout === 'buckets') await buildBucketLayout(knex, { partitions: BUCKET_PARTITIONS });
    // the tenants, each with the four registrations; an entity is one tenant's, and its changes
    // fan out to that tenant's four. On the buckets layout each tenant's bucket is in a partition
    // of its own, so the run crosses partitions as it would cross shards
    const tenants: number[] = [];
    const partitionsTaken = new Set<number>();
    while (tenants.length < TENANTS) {
      const partyId = await seedParty(knex, `Chaos PMC ${tenants.length + 1}`);
      if (options.layout === 'buckets') {
        const { bucket } = await knex('parties').where({ id: partyId }).first('bucket');
        const partition = await bucketPartition(knex, 'webhooks', BUCKET_PARTITIONS, bucket);
        if (partitionsTaken.has(partition)) continue;
        partitionsTaken.add(partition);
      }
      tenants.push(partyId);
    }
    const tenantOf = (entityId: number) => tenants[(entityId - 1) % tenants.length]!;
    const behaviours = new Map<number, Behaviour>();
    for (const partyId of tenants) {
      for (const { behaviour, grouped } of REGISTRATIONS) {
        const { id } = await seedRegistration(knex, {
          partyId,
          targetUrl: target.url(behaviour),
          shouldGroup: grouped,
          // a webhook that fails seven times must not hold its group forever in an unattended run
          shouldGroupContinueAfterFail: true,
          events: [{ entityName: 'Property', type: 2 }],
        });
        behaviours.set(id, behaviour);
      }
    }

    const common = {
      NODE_ENV: 'development',
      DATABASE_URL: databaseUrl,
      DATA_DIR: join(work, 'data'),
      SECRET_ENCRYPTION_KEY: TEST_SECRET_KEY.toString('base64'),
      LOG_LEVEL: 'error',
      ALLOW_PRIVATE_TARGETS: 'true',
    };
    const apiPort = await freePort();
    const api = spawnNode('apps/api/src/main.ts', {
      env: { ...common, API_PORT: String(apiPort), API_HOST: '127.0.0.1' },
      label: 'the API',
      onOutput: stderrLines((l) => log(`api: ${l}`)),
    });
    cleanups.push(async () => {
      api.process.kill('SIGKILL');
      await api.exited;
    });
    const healthz = `http://127.0.0.1:${apiPort}/healthz`;
    await waitForHealthy(healthz, api, 60_000);

    // the dispatchers: short timeout, lease and retry waits so a run settles in seconds; each
    // has its own DISPATCHER_ID, so the webhooks leased to a killed one can be told apart
    let dispatcherNumber = 0;
    const dispatchers = new Set<DispatcherProc>();
    const startDispatcher = async (): Promise<void> => {
      for (;;) {
        const id = `chaos-${++dispatcherNumber}`;
        try {
          // as production runs it: the bundle `pnpm build` makes
          const proc = await startTestDispatcher(
            databaseUrl,
            {
              ...common,
              DISPATCHER_ID: id,
              DISPATCHER_CONCURRENCY: '16',
              WEBHOOK_TIMEOUT: '1s',
              DISPATCHER_LEASE: `${LEASE_MS}ms`,
              DISPATCHER_POLL_INTERVAL: '500ms',
              DISPATCHER_SHUTDOWN_TIMEOUT: '2s',
              WEBHOOK_RETRY_SCHEDULE: RETRY_SCHEDULE,
              // the four paths share one origin, so one breaker: opened by a run of scripted
              // failures, it would record circuit-open tries for webhooks the target would
              // accept, and "Failed exactly where the target never answers 2xx" would not hold.
              // The breaker has its own tests (apps/dispatcher/src/breaker.test.ts).
              DISPATCHER_BREAKER_FAILURES: '10000',
            },
            { bundle: true, timeoutMs: 60_000, onOutput: stderrLines((l) => log(`${id}: ${l}`)) },
          );
          dispatchers.add({ ...proc, id, healthz: `http://127.0.0.1:${proc.port}/healthz` });
          return;
        } catch {
          await sleep(500); // the database may be down: try again
        }
      }
    };
    cleanups.push(async () => {
      for (const proc of dispatchers) proc.process.kill('SIGKILL');
      await Promise.all([...dispatchers].map((proc) => proc.exited));
    });
    await Promise.all([startDispatcher(), startDispatcher()]);

    // the /healthz of the API and of every live dispatcher, sampled all along
    const health: Probe[] = [];
    const dispatcherHealth = new Map<string, Probe[]>();
    let probing = true;
    const prober = (async () => {
      while (probing) {
        const live = [...dispatchers];
        const [api, ...each] = await Promise.all([probe(healthz), ...live.map((d) => probe(d.healthz))]);
        health.push(api!);
        live.forEach((d, i) => {
          if (!dispatcherHealth.has(d.id)) dispatcherHealth.set(d.id, []);
          dispatcherHealth.get(d.id)!.push(each[i]!);
        });
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
                initiatorPartyId: tenantOf(entityId),
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
    const kills: Kill[] = [];
    const outage = { downAt: 0, upAt: 0, survivors: [] as string[] };
    /** When a dispatcher first answered /healthz 200 after Postgres was back; null: not yet. */
    const recoveredAt = (id: string): number | null =>
      dispatcherHealth.get(id)?.find((sample) => sample.at >= outage.upAt && sample.ok)?.at ?? null;
    const restartPostgres = async () => {
      log('restarting Postgres');
      databaseUp = false;
      await knex.destroy();
      // the killer waits for this function, so these dispatchers run through the whole outage
      outage.survivors = [...dispatchers].map((d) => d.id);
      outage.downAt = Date.now();
      await cluster!.stop();
      await sleep(2_000);
      cluster = await startEmbeddedPostgres({ dataDir: join(work, 'pg'), port });
      outage.upAt = Date.now();
      knex = createKnex(databaseUrl, { pool: { max: 4 } });
      databaseUp = true;
      // No kill until every dispatcher that ran through the outage answered /healthz 200 again
      // (or the recovery limit passed), and not in the first seconds after the restart: the
      // recovery is measured on those dispatchers, so none may be replaced before it shows, and
      // the results they held through the outage are written undisturbed.
      const allRecovered = () => outage.survivors.every((id) => recoveredAt(id) !== null);
      while (
        Date.now() < outage.upAt + QUIET_AFTER_RESTART_MS ||
        (!allRecovered() && Date.now() < outage.upAt + RECOVERY_LIMIT_MS)
      ) {
        await sleep(100);
      }
    };
    const killOne = async () => {
      const victims = [...dispatchers];
      const victim = victims[Math.floor(random() * victims.length)]!;
      dispatchers.delete(victim);
      const at = Date.now();
      victim.process.kill('SIGKILL');
      await victim.exited;
      // what the victim held (in flight, claimed but not sent, or delivered with the result not
      // yet written): the webhooks this kill may make reach the target twice. Its leases still
      // hold them for LEASE_MS, so no other dispatcher can have taken them yet.
      const leased = (await knex('webhooks')
        .where('locked_by', victim.id)
        .whereIn('state', CLAIMABLE_WEBHOOK_STATES)
        .pluck('id')) as number[];
      kills.push({ at, dispatcherId: victim.id, leased });
      log(`killed ${victim.id} (${kills.length}), holding ${leased.length} webhooks`);
      await startDispatcher();
    };
    const killer = (async () => {
      const restartAt = chaosStarted + options.writeMs * 0.4;
      let restarted = false;
      for (let i = 0; i < options.kills; i++) {
        await sleep((options.writeMs / (options.kills + 1)) * (0.5 + random()));
        if (!restarted && Date.now() >= restartAt) {
          restarted = true;
          await restartPostgres();
        }
        await killOne();
      }
      if (!restarted) throw new Error('the run ended before the Postgres restart; lengthen writeMs');
    })();
    await Promise.all([writer, killer]);
    log(`written ${changesWritten} changes; waiting for the webhooks to settle`);

    const expected = totalChanges * REGISTRATIONS.length;
    const deadline = Date.now() + options.settleMs;
    for (;;) {
      const settled = Number(
        (await knex('webhooks').whereIn('state', [Successful, Failed, Aborted]).count({ n: '*' }))[0]!.n,
      );
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
      behaviours,
      deliveries: target.deliveries,
      kills,
      outage,
      health,
      dispatchersRecoveredMs: outage.survivors.map((id) => {
        const at = recoveredAt(id);
        return at === null ? null : at - outage.upAt;
      }),
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

/** A webhook as the checks read it: its row, with the entity and sequence number it carries. */
interface WebhookRow {
  id: number;
  registration_id: number;
  state: WebhookState;
  group_key: string | null;
  attempt_count: number;
  /** Its rows in webhook_attempts. */
  attempts: number;
  entity_id: number;
  seq: number;
}

async function report(input: {
  knex: Knex;
  options: ChaosOptions;
  expected: number;
  behaviours: Map<number, Behaviour>;
  deliveries: readonly Delivery[];
  kills: Kill[];
  outage: { downAt: number; upAt: number };
  health: Probe[];
  dispatchersRecoveredMs: (number | null)[];
  started: number;
}): Promise<ChaosReport> {
  const { knex, deliveries, kills, outage } = input;
  /** Detail lines, a few of each kind, so a failing run says which webhooks broke what. */
  const details: string[] = [];
  const detail = (() => {
    const counts = new Map<string, number>();
    return (kind: string, message: string) => {
      const n = (counts.get(kind) ?? 0) + 1;
      counts.set(kind, n);
      if (n > 10) return;
      details.push(`${kind}: ${message}`);
      input.options.log(`${kind}: ${message}`);
    };
  })();
  const rows = (await knex('webhooks as w')
    .join('entity_changes as c', 'c.id', 'w.entity_change_id')
    .select(
      'w.id',
      'w.registration_id',
      'w.state',
      'w.group_key',
      'w.attempt_count',
      knex.raw('(select count(*) from webhook_attempts a where a.webhook_id = w.id)::int as attempts'),
      'c.entity_id',
      knex.raw(`(c.entity->>'seq')::int as seq`),
    )) as WebhookRow[];
  const webhookTables = Number((await knex('webhooks').countDistinct({ n: 'tableoid' }))[0]!.n);
  const interruptedAttempts = Number(
    (await knex('webhook_attempts').where({ error_kind: 'interrupted' }).count({ n: '*' }))[0]!.n,
  );
  const behaviourOf = (row: WebhookRow) => input.behaviours.get(row.registration_id)!;
  const answered2xx = new Map<number, Delivery[]>();
  for (const delivery of deliveries) {
    if (delivery.status === 200) {
      if (!answered2xx.has(delivery.webhookId)) answered2xx.set(delivery.webhookId, []);
      answered2xx.get(delivery.webhookId)!.push(delivery);
    }
  }
  const successful = rows.filter((row) => row.state === Successful);
  const failed = rows.filter((row) => row.state === Failed);
  const lost =
    Math.max(0, input.expected - rows.length) +
    rows.filter((row) => row.state !== Successful && row.state !== Failed).length +
    successful.filter((row) => !answered2xx.has(row.id)).length;

  // the webhooks leased to a dispatcher when it was killed, and when
  const leasedAt = new Map<number, number[]>();
  for (const kill of kills) {
    for (const id of kill.leased) leasedAt.set(id, [...(leasedAt.get(id) ?? []), kill.at]);
  }

  // every webhook Successful, or Failed exactly where the target never answers 2xx, and then
  // only after all seven tries, no more. A claim counts its try before the delivery; a try that
  // a kill (or a result the outage kept from being written) cut short is recorded as an
  // `interrupted` attempt once its lease runs out and retried per schedule, so it is one of the
  // seven, never an eighth.
  const mustFail = (row: WebhookRow) => neverAnswers2xx(behaviourOf(row), row.entity_id, row.seq);
  const triesOk = (row: WebhookRow) => row.attempt_count === TRIES;
  const wrong = rows.filter(
    (row) =>
      (row.state === Successful && mustFail(row)) ||
      (row.state === Failed && (!mustFail(row) || !triesOk(row))),
  );
  // every counted try has its attempt row
  const untracked = rows.filter((row) => row.attempt_count !== row.attempts);
  for (const row of untracked) {
    detail(
      'try without attempt',
      `webhook ${row.id} (${behaviourOf(row)}) counts ${row.attempt_count} tries and has ${row.attempts} attempt rows`,
    );
  }
  for (const row of wrong) {
    detail(
      'wrong outcome',
      `webhook ${row.id} (${behaviourOf(row)}, entity ${row.entity_id}, change ${row.seq}) ended in state ` +
        `${row.state} after ${row.attempt_count} tries`,
    );
  }

  // Per-group order as a receiver sees it: a group's next webhook becomes head only when its head
  // ended (Successful, or Failed with continue-after-fail), so in arrival order the sequence
  // numbers of all attempts of a group (whatever the target answered, hangs and resets too) never
  // go down. The same number may repeat (retries, redeliveries of the head); an earlier one
  // arriving after a later one was attempted is a violation.
  const grouped = new Set(REGISTRATIONS.filter((r) => r.grouped).map((r) => r.behaviour));
  let orderViolations = 0;
  let groupedDeliveries = 0;
  const highest = new Map<string, Delivery>();
  for (const delivery of deliveries) {
    if (!grouped.has(delivery.behaviour)) continue;
    groupedDeliveries++;
    const group = `${delivery.behaviour}:${delivery.entityId}`;
    const before = highest.get(group);
    if (before && delivery.seq < before.seq) {
      orderViolations++;
      detail(
        'order violation',
        `group ${group}: change ${delivery.seq} (webhook ${delivery.webhookId}) arrived at ` +
          `${delivery.receivedAt - input.started} ms, after change ${before.seq} (webhook ` +
          `${before.webhookId}) at ${before.receivedAt - input.started} ms`,
      );
    } else {
      highest.set(group, delivery);
    }
  }

  // Duplicates. A kill explains one only if the webhook was leased to the killed dispatcher and
  // its first 2xx came before the kill (the victim delivered it and died before recording it).
  // What the outage can cost (apps/dispatcher/src/flusher.ts): deliveries go on while Postgres is
  // down, but their results cannot be written. The flusher retries a failed write after 0.2,
  // 0.4, 0.8, 1.6, 3.2 … s, each wait twice the one before, so the wait under way when the
  // database comes back ends at most (time since the first failure + 0.2 s) later; the pool drops
  // the broken connections, so that retry succeeds. A result written after its lease ran out,
  // when another dispatcher has claimed the webhook again meanwhile, is dropped and the webhook
  // delivered again. So an outage duplicate had its first 2xx between the last flush before the
  // stop (SLACK_MS before it) and that retry: at most the outage's length + 0.2 s after Postgres
  // is back (+ SLACK_MS). The LISTEN connection (the dispatchers' /healthz) plays no part in it:
  // results go through the pool.
  const outageMs = outage.upAt - outage.downAt;
  const window = {
    from: outage.downAt - SLACK_MS,
    to: outage.upAt + outageMs + 200 + SLACK_MS,
  };
  const duplicates = [...answered2xx.values()].filter((list) => list.length > 1);
  let duplicatesAtKills = 0;
  let duplicatesAtOutage = 0;
  let unexplainedDuplicates = 0;
  for (const list of duplicates) {
    const { webhookId, behaviour, receivedAt } = list[0]!;
    if ((leasedAt.get(webhookId) ?? []).some((at) => receivedAt <= at + SLACK_MS)) {
      duplicatesAtKills++;
    } else if (receivedAt >= window.from && receivedAt <= window.to) {
      duplicatesAtOutage++;
    } else {
      unexplainedDuplicates++;
      detail(
        'unexplained duplicate',
        `webhook ${webhookId} (${behaviour}): 2xx at ${list.map((d) => d.receivedAt - input.started).join(', ')} ms; ` +
          `kills at ${kills.map((k) => k.at - input.started).join(', ')} ms (leased at ` +
          `${(leasedAt.get(webhookId) ?? []).map((at) => at - input.started).join(', ') || 'none'}); ` +
          `outage window ${window.from - input.started}…${window.to - input.started} ms`,
      );
    }
  }

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
  return {
    seed: input.options.seed,
    layout: input.options.layout ?? 'flat',
    webhookTables,
    webhooks: rows.length,
    groups: new Set(
      rows.filter((row) => row.group_key !== null).map((row) => `${row.registration_id}:${row.group_key}`),
    ).size,
    ungrouped: rows.filter((row) => row.group_key === null).length,
    successful: successful.length,
    failed: failed.length,
    expectedFailed: rows.filter(mustFail).length,
    wrongOutcomes: wrong.length,
    lost,
    triesWithoutAttempt: untracked.length,
    interruptedAttempts,
    orderViolations,
    groupedDeliveries,
    duplicates: duplicates.length,
    duplicatesAtKills,
    duplicatesAtOutage,
    unexplainedDuplicates,
    leasedAtKills: kills.reduce((sum, kill) => sum + kill.leased.length, 0),
    deliveries: deliveries.length,
    kills: kills.length,
    postgresRestarts: outage.upAt > 0 ? 1 : 0,
    outageMs,
    outageWindowMs: [window.from - outage.downAt, window.to - outage.downAt],
    apiDuringOutage,
    apiRecoveredMs: apiBack ? apiBack.at - outage.upAt : null,
    dispatchersRecoveredMs: input.dispatchersRecoveredMs,
    seconds: Math.round((Date.now() - input.started) / 100) / 10,
    details,
  };
}
