import {
  claimWebhooks,
  completeWebhooks,
  createKnex,
  enqueueEntityChange,
  type AttemptResult,
  type ClaimedWebhook,
  type Knex,
} from '@platform/db';
import { WebhookState } from '@platform/shared';
import { LINGER_BATCH } from '../apps/dispatcher/src/flusher';
import type { BenchContext } from './context';
import { round } from './drain';
import { processCpuMs } from './processes';
import { FLOOR_STATEMENTS, seedFloor } from './queue-floor';
import { benchEntity, seedBacklog, seedGroupedBacklog, seedParty, seedRegistration } from './seed';

/**
 * The dispatcher's claim size, and the results one flush carries under load when they are a
 * grouped webhook's (written at once: what finished during the last round trip). An ungrouped
 * webhook's results linger until a statement's worth waits (`LINGER_BATCH`, docs/dispatcher.md ›
 * Writing results).
 */
export const CLAIM = 64;
export const FLUSH = 16;

/** A connection of its own with the dispatcher's session settings (asynchronous commit of its writes). */
const benchSession = (url: string) =>
  createKnex(url, { pool: { max: 1 }, synchronousCommit: false, applicationName: 'platform-bench' });

/** The queue mode's party and its one registration for Property Updated, pointing nowhere (no HTTP here). */
async function seedQueueRegistration(context: BenchContext, knex: Knex, shouldGroup: boolean) {
  const partyId = await seedParty(knex);
  return seedRegistration(knex, {
    partyId,
    targetUrl: 'http://127.0.0.1:9/',
    shouldGroup,
    secrets: context.secrets,
    signingSecret: context.signingSecret,
  });
}

/** p50 and p90 of round trips, ms. */
function quantiles(values: number[]) {
  const sorted = [...values].sort((a, b) => a - b);
  const quantile = (q: number) =>
    round(sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))]!, 3);
  return { p50Ms: quantile(0.5), p90Ms: quantile(0.9) };
}

/**
 * The queue mode: the database's own ceiling, with no HTTP and no dispatcher process. One
 * connection runs the real queue statements in a loop (claims of up to 64, results recorded as
 * every delivery succeeded, with an attempt row each, in flushes as the dispatcher's under load:
 * 128 ungrouped or 16 grouped results) until `count` webhooks are Successful: first `count` ungrouped ones (the throughput
 * mode's seed), then as many over 100 groups (seeded as the enqueue statement leaves them; each
 * result releases its group and leases the next webhook, as in production). The drain of the full system cannot be
 * faster than these rates, whatever the HTTP side costs. Between the two, the floor (`floorFigures`):
 * the same drain through the least statements such a queue needs, the limit of the unordered rate
 * in the same run (`ofFloor`).
 */
export async function queueMode(context: BenchContext, count: number) {
  context.log(`queue: ${count} webhooks, no HTTP`);
  const unordered = await queueFigures(context, count, false);
  const floor = await floorFigures(context, count);
  const ordered = await queueFigures(context, count, true);
  const atRest = await atRestFigures(context);
  const groupedAtRest = await groupedAtRestFigures(context);
  return {
    mode: 'queue',
    webhooks: count,
    perSecond: unordered.perSecond,
    orderedPerSecond: ordered.perSecond,
    orderedRatio: round(ordered.perSecond / unordered.perSecond, 3),
    floorPerSecond: floor.perSecond,
    ofFloor: round(unordered.perSecond / floor.perSecond, 3),
    unordered,
    floor,
    ordered,
    atRest,
    groupedAtRest,
    database: context.cluster.server,
  };
}

/**
 * One queue drain without HTTP: `count` webhooks (over 100 groups if `grouped`) in a fresh
 * database (`database`, a name of the run's), claimed and completed on one connection; its rate
 * and statement counts.
 */
export async function queueFigures(
  context: BenchContext,
  count: number,
  grouped: boolean,
  database = grouped ? 'queue_grouped' : 'queue',
) {
  const { cluster, log } = context;
  const db = await cluster.create(database);
  const registration = await seedQueueRegistration(context, db.knex, grouped);
  const groups = 100;
  if (grouped) {
    await seedGroupedBacklog(db.knex, registration, groups, Math.ceil(count / groups));
  } else {
    await seedBacklog(db.knex, registration, count);
  }
  await db.knex.raw('analyze');
  const total = (await db.knex('webhooks').count<{ n: string }[]>('* as n'))[0]!.n;
  log(`queue: recording ${total} ${grouped ? 'grouped' : 'ungrouped'} results on one connection`);
  // one connection with the dispatcher's session settings (asynchronous commit of its writes)
  const knex = benchSession(db.url);
  const run = await drainWithoutHttp(knex, Number(total), grouped ? FLUSH : LINGER_BATCH).finally(() =>
    knex.destroy(),
  );
  return { perSecond: round(run.done / run.seconds, 0), seconds: round(run.seconds, 3), ...run.statements };
}

/**
 * The floor's drain (`queue-floor.ts`): `count` jobs of the same 1 KB entities through the least
 * statements a durable queue with attempt rows needs, on one connection with the same session
 * settings, claims of 64 and flushes of `LINGER_BATCH`, as the unordered drain: the limit the
 * queue statements are measured against in the same run.
 */
export async function floorFigures(context: BenchContext, count: number, database = 'queue_floor') {
  const db = await context.cluster.create(database);
  await seedFloor(db.knex, count);
  context.log(`queue: recording ${count} results through the floor's statements`);
  const knex = benchSession(db.url);
  const run = await drainWithoutHttp(knex, count, LINGER_BATCH, FLOOR_STATEMENTS).finally(() =>
    knex.destroy(),
  );
  return { perSecond: round(run.done / run.seconds, 0), seconds: round(run.seconds, 3), ...run.statements };
}

/** Untimed rounds before `atRestFigures` measures, and the rounds it measures. */
const REST_WARMUP = 50;
const REST_ROUNDS = 400;

/**
 * The queue statements one webhook at a time, the shape of a quiet system and of the latency
 * mode: a change written by the API's enqueue statement (its own transaction, commit included), then on the
 * dispatcher's connection a claim that takes its one webhook, the completion of it, and a claim
 * that finds nothing (what a wake-up without work costs). Client round trips of each, medians and
 * p90 over `REST_ROUNDS` after `REST_WARMUP`.
 */
export async function atRestFigures(context: BenchContext) {
  const db = await context.cluster.create('queue_rest');
  // subscribed to Property Updated: each change below fans out to one webhook of it
  const { partyId } = await seedQueueRegistration(context, db.knex, false);
  context.log(`queue: ${REST_ROUNDS} webhooks one at a time`);
  const knex = benchSession(db.url);
  const times = {
    enqueueOne: [] as number[],
    claimOne: [] as number[],
    completeOne: [] as number[],
    claimEmpty: [] as number[],
  };
  try {
    const at = new Date().toISOString();
    for (let i = 0; i < REST_WARMUP + REST_ROUNDS; i++) {
      const timed = async <T>(figure: keyof typeof times, run: () => Promise<T>): Promise<T> => {
        const started = performance.now();
        const result = await run();
        if (i >= REST_WARMUP) times[figure].push(performance.now() - started);
        return result;
      };
      await timed('enqueueOne', () =>
        db.knex.transaction((trx) =>
          enqueueEntityChange(trx, {
            entityName: 'Property',
            type: 2,
            entityId: i + 1,
            entity: benchEntity(i + 1, i + 1, partyId, at),
            initiatorPartyId: partyId,
            initiatorAccountId: null,
          }),
        ),
      );
      const leased = await timed('claimOne', () => claimAsBench(knex, CLAIM));
      if (leased.length !== 1) throw new Error(`a claim at rest took ${leased.length} webhooks, not 1`);
      await timed('completeOne', () => recordSuccesses(knex, leased));
      await timed('claimEmpty', () => claimAsBench(knex, CLAIM));
    }
  } finally {
    await knex.destroy();
  }
  return {
    rounds: REST_ROUNDS,
    enqueueOne: quantiles(times.enqueueOne),
    claimOne: quantiles(times.claimOne),
    completeOne: quantiles(times.completeOne),
    claimEmpty: quantiles(times.claimEmpty),
  };
}

/** A queue's two statements as the loop sends them: a claim of up to `batch`, the completion of a batch (with what it leased). */
export interface QueueStatements<Job> {
  claim(knex: Knex, batch: number): Promise<Job[]>;
  complete(knex: Knex, batch: readonly Job[]): Promise<{ applied: unknown[]; leased: Job[] }>;
}

/** Ours: the dispatcher's claim and the completion of every delivery as a success. */
export const OUR_STATEMENTS: QueueStatements<ClaimedWebhook> = {
  claim: (knex, batch) => claimAsBench(knex, batch),
  complete: (knex, batch) => recordSuccesses(knex, batch),
};

/**
 * A group's webhooks one at a time, the shape of an ordered stream on a quiet system: four groups
 * of `REST_ROUNDS` seeded, one head claimed, then each completion of one result leases the group's
 * next webhook to us (as the dispatcher's completion does) and that one is completed in turn. The
 * round trip of each completion (`completeOneGrouped`), p50 and p90 of the last `REST_ROUNDS`.
 */
export async function groupedAtRestFigures(context: BenchContext) {
  const db = await context.cluster.create('queue_rest_grouped');
  const registration = await seedQueueRegistration(context, db.knex, true);
  await seedGroupedBacklog(db.knex, registration, 4, REST_ROUNDS);
  await db.knex.raw('analyze');
  context.log(`queue: ${REST_ROUNDS} grouped webhooks one at a time`);
  const knex = benchSession(db.url);
  const times: number[] = [];
  try {
    let [current] = await claimAsBench(knex, 1);
    for (let i = 0; i < REST_WARMUP + REST_ROUNDS; i++) {
      if (!current) throw new Error(`no grouped webhook left after ${i} completions`);
      const started = performance.now();
      const { leased } = await recordSuccesses(knex, [current]);
      if (i >= REST_WARMUP) times.push(performance.now() - started);
      current = leased[0] ?? (await claimAsBench(knex, 1))[0];
    }
  } finally {
    await knex.destroy();
  }
  return { rounds: REST_ROUNDS, completeOneGrouped: quantiles(times) };
}

/**
 * Claims and completes until `total` are Successful, `flush` results per completion; one
 * connection, one statement at a time. `statements`: ours, or the floor's (`queue-floor.ts`).
 */
export async function drainWithoutHttp<Job = ClaimedWebhook>(
  knex: Knex,
  total: number,
  flush = FLUSH,
  statements: QueueStatements<Job> = OUR_STATEMENTS as unknown as QueueStatements<Job>,
) {
  const buffer: Job[] = [];
  let done = 0;
  let claims = 0;
  let completions = 0;
  // wall time spent in each statement (one connection: its round trip and the backend's work)
  let claimMs = 0;
  let completeMs = 0;
  const { rows } = await knex.raw<{ rows: { pid: number }[] }>('select pg_backend_pid() as pid');
  const backend = rows[0]!.pid;
  const backendBefore = await processCpuMs(backend);
  const clientBefore = process.cpuUsage();
  const started = performance.now();
  while (done < total) {
    // claims as the dispatcher's buffer refills: while less than half a claim, or a flush, is left
    while (buffer.length < Math.max(CLAIM / 2, flush)) {
      const claimStarted = performance.now();
      const leased = await statements.claim(knex, CLAIM - (buffer.length % CLAIM));
      claimMs += performance.now() - claimStarted;
      claims++;
      if (leased.length === 0) break;
      buffer.push(...leased);
    }
    const batch = buffer.splice(0, flush);
    if (batch.length === 0) throw new Error(`nothing left to claim after ${done} of ${total}`);
    const completeStarted = performance.now();
    const { applied, leased } = await statements.complete(knex, batch);
    completeMs += performance.now() - completeStarted;
    completions++;
    done += applied.length;
    buffer.push(...leased);
  }
  const seconds = (performance.now() - started) / 1000;
  const client = process.cpuUsage(clientBefore);
  const backendMs = (await processCpuMs(backend)) - backendBefore;
  return {
    done,
    seconds,
    statements: {
      claims,
      completions,
      claimMsPerWebhook: round(claimMs / done, 4),
      completeMsPerWebhook: round(completeMs / done, 4),
      // CPU per webhook: less sensitive to other load than the rate. The backend's CPU is read
      // from /proc, so it is NaN when the database runs on another machine.
      backendCpuMsPerWebhook: round(backendMs / done, 4),
      clientCpuMsPerWebhook: round((client.user + client.system) / 1000 / done, 4),
    },
  };
}

/** One claim of up to `batch` webhooks as the bench's dispatcher ("bench"), holding nothing yet. */
export async function claimAsBench(knex: Knex, batch: number): Promise<ClaimedWebhook[]> {
  const claim = await claimWebhooks(knex, {
    batch,
    leaseMs: 60_000,
    dispatcherId: 'bench',
    rooms: new Map(),
    defaultRoom: CLAIM,
  });
  return claim.leased;
}

/** Records every webhook of `batch` as delivered (a 200 with an attempt row), as the dispatcher would. */
export async function recordSuccesses(knex: Knex, batch: readonly ClaimedWebhook[]) {
  const startedAt = new Date();
  const results: AttemptResult[] = batch.map((webhook) => ({
    webhookId: webhook.id,
    registrationId: webhook.registration_id,
    targetId: webhook.target_id,
    groupKey: webhook.group_key,
    attempt: webhook.attempt,
    startedAt,
    durationMs: 1,
    statusCode: 200,
    errorKind: null,
    responseBody: '',
    state: WebhookState.Successful,
    retryDelayMs: null,
    holdMs: null,
    releasesGroup: true,
  }));
  return completeWebhooks(
    knex,
    {
      dispatcherId: 'bench',
      leaseMs: 60_000,
      // the dispatcher's defaults; all successes here, so only their cost matters
      policy: {
        breakerFailures: 5,
        breakerCooldownMs: 30_000,
        breakerMaxCooldownMs: 600_000,
        disableAfterMs: 5 * 86_400_000,
        disableMinAttempts: 10,
      },
    },
    results,
  );
}
