import {
  CLAIM_PICK_SQL,
  claimBindings,
  claimWebhooks,
  REGISTRATION_HEALTH_SQL,
  registrationHealth,
  type Knex,
} from '@platform/db';
import { WebhookState } from '@platform/shared';
import { TargetLimits } from '../apps/dispatcher/src/target-limits';
import type { BenchContext } from './context';
import { round } from './drain';
import { seedBacklog, seedParty, seedRegistration } from './seed';

/** Due webhooks per endpoint in the claim-scale databases. */
const ROWS_PER_ENDPOINT = 10;
/** Claims of each database before timing starts (plans cached, pages warm). */
const WARMUP = 20;
/** Endpoints with due work in the reference database. */
const REFERENCE_ENDPOINTS = 10;
/** Origins the endpoints are spread over (the per-host split applies within each). */
const ORIGINS = 100;

const percentile = (sorted: number[], p: number) =>
  sorted[Math.min(sorted.length - 1, Math.floor(p * sorted.length))]!;

function summary(samples: number[]) {
  const sorted = [...samples].sort((a, b) => a - b);
  return {
    samples: samples.length,
    medianMs: round(percentile(sorted, 0.5), 3),
    p95Ms: round(percentile(sorted, 0.95), 3),
  };
}

/**
 * `endpoints` registrations of one party, each its own endpoint (URL), spread over ORIGINS
 * origins, with ROWS_PER_ENDPOINT Created webhooks each, due now: all written by SQL.
 */
async function seedEndpoints(knex: Knex, context: BenchContext, endpoints: number): Promise<void> {
  const partyId = await seedParty(knex);
  const sealed = context.secrets.seal(context.signingSecret);
  await knex.raw(
    `insert into webhook_registrations (party_id, bucket, target_url, should_group, should_group_continue_after_fail,
                                        auth_type, signing_secret)
     select :partyId::int, (select bucket from parties where id = :partyId::int),
            'http://h' || (i % ${ORIGINS}) || '.bench.invalid/e' || i, false, false, 0, :sealed
       from generate_series(1, :endpoints::int) as i`,
    { partyId, sealed, endpoints },
  );
  await knex.raw(
    `insert into webhook_events (registration_id, bucket, entity_name, type)
     select id, bucket, 'Property', 2 from webhook_registrations`,
  );
  await knex.raw(
    `insert into entity_changes (entity_name, type, entity_id, entity, initiator_party_id, initiator_account_id)
     select 'Property', 2, i, jsonb_build_object('id', i, 'partyId', :partyId::int), :partyId::int, null
       from generate_series(1, ${ROWS_PER_ENDPOINT}) as i`,
    { partyId },
  );
  await knex.raw(
    `insert into webhooks (registration_id, bucket, event_id, entity_change_id, state, next_attempt_at)
     select e.registration_id, e.bucket, e.id, c.id, ${WebhookState.Created}, now() - interval '1 minute'
       from webhook_events e cross join entity_changes c`,
  );
  await knex.raw('vacuum analyze webhooks, webhook_registrations, webhook_targets');
}

/**
 * One claim as a dispatcher just started sends it (a batch of twice its slots, no endpoint held,
 * the default per-host cap, prepared), from the cursor the previous claim answered; timed from the
 * statement's send to its answer, in a transaction rolled back afterwards, so every claim finds
 * the same due work. The commit a real claim pays (a WAL flush) is not part of it.
 */
async function timedClaim(
  knex: Knex,
  concurrency: number,
  after: number,
  explain = false,
): Promise<{ ms: number; leased: number; cursor: number; plan?: string[] }> {
  const limits = new TargetLimits({
    concurrency,
    maxPerTarget: concurrency,
    maxPerHost: 4 * concurrency,
    slowMs: 1_000,
  });
  const options = {
    batch: 2 * concurrency,
    leaseMs: 60_000,
    dispatcherId: 'bench',
    after,
    ...limits.claimRooms(),
  };
  const trx = await knex.transaction();
  try {
    if (explain) {
      // the pick statement: the part of webhooks_claim that reads the queue (functions/webhooks-claim.ts)
      const { rows } = await trx.raw<{ rows: { 'QUERY PLAN': string }[] }>(
        `explain (analyze, buffers, costs off) ${CLAIM_PICK_SQL}`,
        claimBindings(options),
      );
      return { ms: NaN, leased: 0, cursor: after, plan: rows.map((row) => row['QUERY PLAN']) };
    }
    const started = performance.now();
    // as the dispatcher sends it: one call of webhooks_claim, a named prepared statement
    const claim = await claimWebhooks(trx, options);
    const ms = performance.now() - started;
    return { ms, leased: claim.leased.length, cursor: claim.cursor };
  } finally {
    await trx.rollback().catch(() => {});
  }
}

/**
 * The claim's cost with `endpoints` endpoints having due work, beside its cost with 10, measured
 * in one run and interleaved (a claim of one, a claim of the other, …), so both see the same
 * machine. Each walks on from the cursor its previous claim answered, as the dispatcher does.
 */
export async function claimScaleMode(context: BenchContext, options: { endpoints: number; claims: number }) {
  const { cluster, log } = context;
  const subjects = [
    { endpoints: REFERENCE_ENDPOINTS, db: await cluster.create('claims_ref') },
    { endpoints: options.endpoints, db: await cluster.create('claims_many') },
  ];
  for (const subject of subjects) {
    log(`claim-scale: seeding ${subject.endpoints} endpoints with ${ROWS_PER_ENDPOINT} due webhooks each`);
    await seedEndpoints(subject.db.knex, context, subject.endpoints);
  }
  const cursors = subjects.map(() => 0);
  const samples = subjects.map(() => [] as number[]);
  const leased = subjects.map(() => [] as number[]);
  for (let i = 0; i < WARMUP + options.claims; i++) {
    for (const [index, subject] of subjects.entries()) {
      const claim = await timedClaim(subject.db.knex, context.concurrency, cursors[index]!);
      cursors[index] = claim.cursor;
      if (i >= WARMUP) {
        samples[index]!.push(claim.ms);
        leased[index]!.push(claim.leased);
      }
    }
  }
  const executionMs: number[] = [];
  for (const [index, subject] of subjects.entries()) {
    const { plan } = await timedClaim(subject.db.knex, context.concurrency, cursors[index]!, true);
    log(`claim-scale: the claim at ${subject.endpoints} endpoints with due work:\n  ${plan!.join('\n  ')}`);
    executionMs.push(
      Number(/([\d.]+) ms/.exec(plan!.find((line) => line.startsWith('Execution Time'))!)![1]),
    );
  }
  const [reference, many] = subjects.map((subject, index) => ({
    endpoints: subject.endpoints,
    ...summary(samples[index]!),
    leasedPerClaim: Math.min(...leased[index]!),
    /** The server's own time for one claim (EXPLAIN ANALYZE, after the timed ones). */
    explainMs: executionMs[index],
  }));
  for (const subject of subjects) await subject.db.drop();
  return {
    mode: 'claim-scale',
    batch: 2 * context.concurrency,
    reference,
    many,
    ratio: round(many!.medianMs / reference!.medianMs, 2),
    database: cluster.server,
  };
}

/**
 * The health read (`registrationHealth`, what GET /api/webhook-registrations/{id}/health sends)
 * of a registration with `waiting` webhooks awaiting delivery, seeded by SQL; median and p95 of
 * `reads` reads, and its plan (EXPLAIN ANALYZE, logged; its execution time reported).
 */
export async function healthScaleMode(context: BenchContext, options: { waiting: number; reads: number }) {
  const { cluster, log } = context;
  const db = await cluster.create('health');
  const partyId = await seedParty(db.knex);
  const registration = await seedRegistration(db.knex, {
    partyId,
    targetUrl: context.target.url,
    shouldGroup: false,
    secrets: context.secrets,
    signingSecret: context.signingSecret,
  });
  log(`health: seeding ${options.waiting} waiting webhooks`);
  const seedStarted = performance.now();
  // one change the whole backlog points at: the read never looks at bodies, and a million
  // bodies would make the seed take minutes
  await seedBacklog(db.knex, registration, 1);
  await db.knex.raw(
    `insert into webhooks (registration_id, bucket, event_id, entity_change_id, state, next_attempt_at)
     select registration_id, bucket, event_id, entity_change_id, state, now() - make_interval(secs => i)
       from webhooks, generate_series(2, :waiting::int) as i`,
    { waiting: options.waiting },
  );
  await db.knex.raw('vacuum analyze webhooks');
  const seedSeconds = (performance.now() - seedStarted) / 1000;
  const samples: number[] = [];
  let dueCount = 0;
  for (let i = 0; i < WARMUP + options.reads; i++) {
    const started = performance.now();
    const row = await registrationHealth(db.knex, registration.registrationId);
    if (i >= WARMUP) samples.push(performance.now() - started);
    dueCount = row!.due_count;
  }
  const { rows } = await db.knex.raw<{ rows: { 'QUERY PLAN': string }[] }>(
    `explain (analyze, costs off) ${REGISTRATION_HEALTH_SQL}`,
    { id: registration.registrationId },
  );
  const plan = rows.map((row) => row['QUERY PLAN']);
  log(`health: the read at ${options.waiting} waiting:\n  ${plan.join('\n  ')}`);
  await db.drop();
  return {
    mode: 'health',
    waiting: options.waiting,
    seedSeconds: round(seedSeconds, 1),
    dueCount,
    ...summary(samples),
    executionMs: Number(
      /([\d.]+) ms/.exec(plan.find((line) => line.startsWith('Execution Time')) ?? '')?.[1],
    ),
    database: cluster.server,
  };
}
