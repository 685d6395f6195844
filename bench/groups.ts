import type { BenchContext } from './context';
import { drainFigures, round, waitForDrain } from './drain';
import { seedParty, seedRegistration, writeGroupedChanges } from './seed';
import { startDispatcher } from './stack';

/** Connections writing changes at once. */
const WRITERS = 4;

/**
 * The groups mode: a `shouldGroup` registration and `groups` entities with `changesPerGroup`
 * changes each (half of each entity's changes in ONE transaction), written through the real
 * enqueue statement. Round 1 is a backlog written before the dispatcher starts, whose drain rate
 * is measured; round 2 is written while the dispatcher runs, so producers and releases of a group
 * interleave. The target checks every entity's deliveries arrive in the order they were written.
 */
export async function groupsMode(
  context: BenchContext,
  options: { groups: number; changesPerGroup: number; unorderedPerSecond?: number },
) {
  const { cluster, target, log } = context;
  const { groups, changesPerGroup } = options;
  const db = await cluster.create('groups');
  const partyId = await seedParty(db.knex);
  await seedRegistration(db.knex, {
    partyId,
    targetUrl: target.url,
    shouldGroup: true,
    secrets: context.secrets,
    signingSecret: context.signingSecret,
  });
  log(`groups: writing ${groups} groups × ${changesPerGroup} changes`);
  const round1 = await writeGroupedChanges(db.knex, {
    partyId,
    groups,
    changesPerGroup,
    firstSeq: 1,
    writers: WRITERS,
  });
  await db.knex.raw('analyze webhooks, webhook_groups, entity_changes');

  log('groups: draining the backlog, then writing a second round live');
  await target.reset(true);
  const dispatcher = await startDispatcher(context.stack(db.url));
  await waitForDrain(db.knex, target, round1, context.timeoutMs);
  const drain = await drainFigures(db.knex);
  const lastBacklogId = (await db.knex('webhooks').max('id as id').first())!.id as number;

  const round2 = await writeGroupedChanges(db.knex, {
    partyId,
    groups,
    changesPerGroup,
    firstSeq: changesPerGroup + 1,
    writers: WRITERS,
  });
  await waitForDrain(db.knex, target, round1 + round2, context.timeoutMs);
  const live = await drainFigures(db.knex, lastBacklogId);
  const rssMb = await dispatcher.stop();
  const stats = await target.stats();
  return {
    mode: 'groups',
    groups,
    changesPerGroup,
    deliveries: drain.deliveries,
    seconds: round(drain.seconds, 3),
    perSecond: round(drain.perSecond),
    ...(options.unorderedPerSecond
      ? { ratioToUnordered: round(drain.perSecond / options.unorderedPerSecond, 3) }
      : {}),
    liveDeliveries: live.deliveries,
    orderViolations: stats.orderViolations,
    redeliveries: stats.duplicates,
    rssMb,
    concurrency: context.concurrency,
    database: cluster.server,
  };
}
