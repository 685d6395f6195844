import { CLAIM_PICK_SQL, claimBindings, type Knex } from '@platform/db';
import { WebhookState } from '@platform/shared';
import { eventually } from '@platform/testkit';
import { TargetLimits } from '../apps/dispatcher/src/target-limits';
import type { BenchContext } from './context';
import { round } from './drain';
import { seedBacklog, seedParty, seedRegistration } from './seed';
import { startDispatcher } from './stack';

/** Deliveries the backlog mode times: the first this many of the backlog. */
const MEASURED = 50_000;

/**
 * The claim's pick statement (`CLAIM_PICK_SQL`, packages/db/src/queue/functions/webhooks-claim.ts:
 * what `webhooks_claim` runs before the lease, the part that reads the queue), with the
 * bindings of a dispatcher that has just started at the bench's concurrency and holds nothing
 * (a batch of twice its slots, the default room of a target it has not met), explained with
 * ANALYZE in a transaction that is rolled back, so the rows it locks (and a breaker
 * it might half-open) stay as they were. It is an index scan when the webhooks are read through
 * `webhooks_claimable` and never sequentially.
 */
async function explainClaim(
  knex: Knex,
  concurrency: number,
): Promise<{ plan: string[]; indexScan: boolean; ms: number }> {
  const limits = new TargetLimits({ concurrency, maxPerTarget: concurrency, slowMs: 1_000 });
  const bindings = claimBindings({
    batch: 2 * concurrency,
    leaseMs: 60_000,
    dispatcherId: 'explain',
    rooms: limits.rooms(),
    defaultRoom: limits.defaultRoom(),
  });
  const trx = await knex.transaction();
  let plan: string[];
  try {
    const { rows } = await trx.raw<{ rows: { 'QUERY PLAN': string }[] }>(
      `explain (analyze, buffers, costs off) ${CLAIM_PICK_SQL}`,
      bindings,
    );
    plan = rows.map((row) => row['QUERY PLAN']);
  } finally {
    await trx.rollback().catch(() => {});
  }
  const time = plan.find((line) => line.startsWith('Execution Time'));
  return {
    plan,
    indexScan:
      plan.some((line) => /Index (Only )?Scan using webhooks_claimable/.test(line)) &&
      !plan.some((line) => /Seq Scan on webhooks\b/.test(line)),
    ms: time ? Number(/([\d.]+) ms/.exec(time)![1]) : NaN,
  };
}

/**
 * The backlog mode: `count` (1,000,000) Created webhooks seeded by SQL for one ungrouped
 * registration, the claim explained on that queue, then the real dispatcher drains it and the
 * rate of its first 50,000 deliveries is measured; the claim is explained again afterwards, on
 * the queue as the drain left it (50,000 rows gone from the head of its index).
 */
export async function backlogMode(
  context: BenchContext,
  options: { count: number; unorderedPerSecond?: number },
) {
  const { cluster, target, log } = context;
  const db = await cluster.create('backlog');
  const partyId = await seedParty(db.knex);
  const registration = await seedRegistration(db.knex, {
    partyId,
    targetUrl: target.url,
    shouldGroup: false,
    secrets: context.secrets,
    signingSecret: context.signingSecret,
  });
  log(`backlog: seeding ${options.count} webhooks`);
  const seedStarted = performance.now();
  await seedBacklog(db.knex, registration, options.count);
  const seedSeconds = (performance.now() - seedStarted) / 1000;
  const before = await explainClaim(db.knex, context.concurrency);
  log(`backlog: the claim on ${options.count} waiting webhooks:\n  ${before.plan.join('\n  ')}`);

  const measured = Math.min(MEASURED, options.count);
  await target.reset(false);
  const dispatcher = await startDispatcher(context.stack(db.url));
  await eventually(async () => (await target.stats()).received >= measured, {
    timeoutMs: context.timeoutMs,
    what: `the target did not receive ${measured} deliveries`,
  });
  await eventually(
    async () =>
      Number((await db.knex('webhooks').where({ state: WebhookState.Successful }).count({ n: '*' }))[0]!.n) >=
      measured,
    { timeoutMs: context.timeoutMs, what: `${measured} webhooks did not become Successful` },
  );
  const rssMb = await dispatcher.stop();
  // from the first attempt's start to the measured-th completion
  const { rows } = await db.knex.raw<{ rows: { seconds: number }[] }>(
    `select extract(epoch from
       (select completed_at from webhooks where state = ${WebhookState.Successful} order by completed_at offset ? - 1 limit 1) -
       (select min(started_at) from webhook_attempts))::float8 as seconds`,
    [measured],
  );
  const seconds = rows[0]!.seconds;
  const after = await explainClaim(db.knex, context.concurrency);
  log(`backlog: the claim after the drain:\n  ${after.plan.join('\n  ')}`);
  const perSecond = measured / seconds;
  return {
    mode: 'backlog',
    waiting: options.count,
    seedSeconds: round(seedSeconds, 1),
    deliveries: measured,
    seconds: round(seconds, 3),
    perSecond: round(perSecond),
    ratioTo20k: options.unorderedPerSecond ? round(perSecond / options.unorderedPerSecond, 3) : null,
    claimUsesIndexScan: before.indexScan && after.indexScan,
    claimMs: round(before.ms, 3),
    claimMsAfterDrain: round(after.ms, 3),
    claimPlan: before.plan
      .filter((line) => /Scan|Limit|LockRows|InitPlan|Result/.test(line))
      .map((line) => line.trim()),
    rssMb,
    database: cluster.server,
  };
}
