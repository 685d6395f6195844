import { signStandardWebhook } from '@platform/delivery';
import { WEBHOOK_USER_AGENT } from '@platform/shared';
import { deliveryBody } from '@platform/db';
import type { BenchContext } from './context';
import { drainFigures, round, waitForDrain } from './drain';
import { measureRawHttp, type RawRequest } from './raw-http';
import { seedBacklog, seedParty, seedRegistration } from './seed';
import { machineBusyMs, processCpuMs } from './processes';
import { startDispatcher } from './stack';

/**
 * The throughput mode: `count` Created webhooks seeded by SQL for one ungrouped registration,
 * drained by the real dispatcher; and in the same run, the same bodies POSTed to the same target
 * with undici at the same concurrency and no database (the raw HTTP limit).
 */
export async function throughputMode(context: BenchContext, count: number) {
  const { cluster, target, log } = context;
  const db = await cluster.create('throughput');
  const partyId = await seedParty(db.knex);
  const registration = await seedRegistration(db.knex, {
    partyId,
    targetUrl: target.url,
    shouldGroup: false,
    secrets: context.secrets,
    signingSecret: context.signingSecret,
  });
  log(`throughput: seeding ${count} webhooks`);
  await seedBacklog(db.knex, registration, count);

  // the requests the dispatcher will send (the delivery body and the Standard Webhooks headers),
  // all built before the clock starts: the raw figure measures HTTP alone
  const event = await db.knex('webhook_events').where({ id: registration.eventId }).first();
  const changes = await db
    .knex('entity_changes')
    .orderBy('id')
    .select('entity', 'initiator_party_id', 'initiator_account_id');
  const timestamp = Math.floor(Date.now() / 1000);
  const requests: RawRequest[] = changes.map((change, index) => {
    const body = JSON.stringify(deliveryBody(change, event));
    const id = String(index + 1);
    return {
      body,
      headers: {
        'content-type': 'application/json',
        'user-agent': WEBHOOK_USER_AGENT,
        'webhook-id': id,
        'webhook-timestamp': String(timestamp),
        'webhook-signature': signStandardWebhook(context.signingSecret, id, timestamp, body),
      },
    };
  });
  const bodyBytes = Math.round(requests.reduce((sum, r) => sum + r.body.length, 0) / requests.length);

  log(`throughput: raw undici limit, ${count} POSTs at concurrency ${context.concurrency}`);
  await target.reset(false);
  const raw = await measureRawHttp(target.url, requests, {
    concurrency: context.concurrency,
    warmup: Math.min(2_000, count),
  });

  log('throughput: draining with the dispatcher');
  await target.reset(false);
  const dispatcher = await startDispatcher(context.stack(db.url));
  // CPU from here (it is healthy, started up) to the end of the drain, over the deliveries made
  // meanwhile: the dispatcher process's, and the whole machine's (Postgres and the target included)
  const pid = dispatcher.child.process.pid!;
  const [cpuBefore, machineBefore, receivedBefore] = [
    await processCpuMs(pid),
    await machineBusyMs(),
    (await target.stats()).received,
  ];
  await waitForDrain(db.knex, target, count, context.timeoutMs);
  const [cpuAfter, machineAfter] = [await processCpuMs(pid), await machineBusyMs()];
  const measured = count - receivedBefore;
  const rssMb = await dispatcher.stop();
  const drain = await drainFigures(db.knex);
  const received = (await target.stats()).received;
  return {
    mode: 'throughput',
    deliveries: drain.deliveries,
    seconds: round(drain.seconds, 3),
    perSecond: round(drain.perSecond),
    rawHttpPerSecond: round(raw.perSecond),
    ratio: round(drain.perSecond / raw.perSecond, 3),
    dispatcherCpuMsPerDelivery: round((cpuAfter - cpuBefore) / measured, 3),
    machineCpuMsPerDelivery: round((machineAfter - machineBefore) / measured, 3),
    rssMb,
    attempts: drain.attempts,
    attemptsPerFlush: round(drain.attempts / drain.flushes, 1),
    // deliveries the target saw more than once (a lease that ran out): 0 in a healthy run
    redeliveries: received - drain.deliveries,
    concurrency: context.concurrency,
    bodyBytes,
    database: cluster.server,
  };
}
