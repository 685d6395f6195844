import { setTimeout as sleep } from 'node:timers/promises';
import { enqueueEntityChange, notifyWebhookDue, type Knex } from '@platform/db';
import { type SecretBox } from '@platform/crypto';
import { quantile } from './quantile';
import { propertyChange, seedChange, seedParty, seedRegistration } from './seed';
import { startTestTarget, type TargetAnswer, type TestTarget } from './target';
import { eventually, type Watched } from './wait';

// The delivery-isolation scenario, shared by the dispatcher's isolation test and
// `pnpm bench --isolation`, so that both measure the same thing the same way: ten healthy
// tenants, each with one registration, and one tenant whose first endpoint never answers while
// its second endpoint is healthy. Where each endpoint lives, beside the dead one or at an origin
// of its own, is the layout (issue 27's three: ISOLATION_LAYOUTS).

/** Property Created: the dead endpoint's backlog, which nobody else subscribes to. */
const BACKLOG_TYPE = 1;
/** Property Updated: the measured writes, which every registration of the scenario subscribes to. */
const MEASURED_TYPE = 2;

/**
 * Where the healthy endpoints are, against the dead endpoint's host. Each layout measures both
 * kinds of healthy endpoint (the ten other tenants', the dead tenant's second); the layout says
 * which of them share the dead endpoint's origin:
 * - `other-hosts` (a): none; every healthy endpoint has an origin of its own;
 * - `same-host` (b): the ten other tenants', at other paths of the dead endpoint's origin;
 * - `same-party` (c): the dead tenant's own second endpoint, at another path of that origin.
 */
export const ISOLATION_LAYOUTS = ['other-hosts', 'same-host', 'same-party'] as const;
export type IsolationLayout = (typeof ISOLATION_LAYOUTS)[number];

/** The dead endpoint's path on its host: the one path there that never answers. */
export const DEAD_PATH = '/dead';

/** The servers a layout places its endpoints on. */
export interface IsolationHosts {
  /** The dead endpoint's origin: a server that never answers DEAD_PATH and answers every other path. */
  sharedOrigin: string;
  /** ISOLATION.healthyTargets + 1 URLs, each at an origin of its own (not sharedOrigin). */
  ownUrls: readonly string[];
}

/** The scenario's endpoints in `layout`: the ten healthy tenants', the dead tenant's second, the dead one. */
export function isolationUrls(
  layout: IsolationLayout,
  hosts: IsolationHosts,
): { healthyUrls: string[]; siblingUrl: string; deadUrl: string } {
  const { sharedOrigin, ownUrls } = hosts;
  if (ownUrls.length !== ISOLATION.healthyTargets + 1)
    throw new Error(`the isolation scenario needs ${ISOLATION.healthyTargets + 1} origins of their own`);
  const own = ownUrls.slice(0, ISOLATION.healthyTargets);
  return {
    healthyUrls:
      layout === 'same-host' ? own.map((_, index) => `${sharedOrigin}/tenant-${index + 1}`) : [...own],
    siblingUrl: layout === 'same-party' ? `${sharedOrigin}/sibling` : ownUrls[ISOLATION.healthyTargets]!,
    deadUrl: `${sharedOrigin}${DEAD_PATH}`,
  };
}

/**
 * The dead endpoint's host for the test: every path answers 200 at once, except DEAD_PATH, which
 * accepts the request, reads it and never answers (the bench's target process does the same).
 */
export const startSharedHost = (): Promise<TestTarget> =>
  startTestTarget((request): TargetAnswer => (request.path === DEAD_PATH ? { hang: true } : {}));

export interface IsolationCast {
  layout: IsolationLayout;
  /** The healthy tenants: a party and its one registration each. */
  healthy: { partyId: number; registrationId: number }[];
  /** The tenant whose first endpoint is dead (once `seedDeadBacklog` registers it). */
  deadPartyId: number;
  /** The dead tenant's second endpoint: a healthy one. */
  siblingRegistrationId: number;
  /** Where `seedDeadBacklog` registers the dead endpoint. */
  deadUrl: string;
}

/** How the registrations' secrets are sealed: the testkit's key unless told (the bench has its own). */
export interface IsolationSecrets {
  secrets?: SecretBox;
  signingSecret?: string;
}

/**
 * Seeds the healthy tenants (one party and one registration each) and the dead tenant with its
 * healthy second endpoint, where `layout` puts them on `hosts`, all subscribed to Property
 * Updated. The dead endpoint itself comes later, with its backlog (`seedDeadBacklog`).
 */
export async function seedIsolationCast(
  knex: Knex,
  options: { layout: IsolationLayout; hosts: IsolationHosts } & IsolationSecrets,
): Promise<IsolationCast> {
  const { layout, hosts, ...sealing } = options;
  const { healthyUrls, siblingUrl, deadUrl } = isolationUrls(layout, hosts);
  const events = [{ entityName: 'Property', type: MEASURED_TYPE }];
  const healthy: IsolationCast['healthy'] = [];
  for (const [index, targetUrl] of healthyUrls.entries()) {
    const partyId = await seedParty(knex, `Healthy ${index + 1}`);
    const { id } = await seedRegistration(knex, { partyId, targetUrl, events, ...sealing });
    healthy.push({ partyId, registrationId: id });
  }
  const deadPartyId = await seedParty(knex, 'Dead endpoint');
  const sibling = await seedRegistration(knex, {
    partyId: deadPartyId,
    targetUrl: siblingUrl,
    events,
    ...sealing,
  });
  return { layout, healthy, deadPartyId, siblingRegistrationId: sibling.id, deadUrl };
}

/** The scenario's settings, the same in the test and the bench. */
export const ISOLATION = {
  /** Healthy tenants, each with one registration. */
  healthyTargets: 10,
  /** Webhooks due to the dead endpoint before the measured writes begin. */
  deadBacklog: 1_000,
  /** The WEBHOOK_TIMEOUT: each delivery to the dead endpoint holds its slot this long. */
  webhookTimeout: '2s',
  /** Unmeasured writes before a measured phase: connections, JIT, caches. */
  warmupSeconds: 1,
  /** How long after a phase's last write its healthy deliveries may still arrive (five timeouts). */
  giveUpMs: 10_000,
  /** The bound: no healthy delivery arrives later than this after its write, dead endpoint or not. */
  latestMs: 1_000,
} as const;

/**
 * Registers the dead endpoint (at `cast.deadUrl`) for the dead tenant (Property Created and
 * Updated), queues ISOLATION.deadBacklog Property Created changes in one transaction (one NOTIFY):
 * as many webhooks due now for the dead endpoint alone, its sibling listening to Updated only; and
 * resolves once the dispatcher has sent it one of them (`deadRequests`, the requests its host has
 * received at DEAD_PATH so far, grows), so the dead endpoint holds delivery slots before any
 * measured write. From then on the dead tenant's measured writes fan out to the dead endpoint too.
 * Answers the dead registration's id.
 */
export async function seedDeadBacklog(
  knex: Knex,
  cast: IsolationCast,
  options: { deadRequests(): number | Promise<number>; watch?: Watched } & IsolationSecrets,
): Promise<number> {
  const { deadRequests, watch, ...sealing } = options;
  const before = await deadRequests();
  const { id } = await seedRegistration(knex, {
    partyId: cast.deadPartyId,
    targetUrl: cast.deadUrl,
    events: [BACKLOG_TYPE, MEASURED_TYPE].map((type) => ({ entityName: 'Property', type })),
    ...sealing,
  });
  await knex.transaction(async (trx) => {
    for (let i = 1; i <= ISOLATION.deadBacklog; i++)
      await enqueueEntityChange(trx, propertyChange(cast.deadPartyId, 1_000_000 + i, {}, BACKLOG_TYPE));
    await notifyWebhookDue(trx);
  });
  await eventually(async () => (await deadRequests()) > before, {
    what: 'the dead endpoint receiving its first delivery',
    watch,
  });
  return id;
}

/** A webhook a measured write fanned out to. */
export interface WrittenWebhook {
  id: number;
  registrationId: number;
  /** When its change committed (epoch ms, fractional): the earliest a dispatcher can see it. */
  committedAt: number;
}

/** High-resolution wall clock, comparable across the processes of one machine. */
export const wallClock = (): number => performance.timeOrigin + performance.now();

/**
 * Writes Property Updated changes at a steady `perSecond` for `seconds`, the i-th of party
 * `partyIds[i % n]`, each in a transaction of its own through the enqueue statement and a
 * NOTIFY, as the API's write path does. Open loop: each write leaves on its schedule whether or
 * not the earlier ones have committed, so a slow database cannot thin out the load it is measured
 * under. Answers every webhook the writes fanned out to, with the commit of its change: the
 * server's commit timestamp where it records them (`track_commit_timestamp`, as the bench's
 * embedded cluster does), else the moment the commit was acknowledged here (a little after it:
 * a lower bound of the delay). Delivery latency counts from the commit, not from the start of the
 * write: on a shared machine a commit's fsync alone varies by a hundred milliseconds, which is
 * the database's latency, not the dispatcher's.
 */
export async function writeSteadily(
  knex: Knex,
  options: { partyIds: readonly number[]; perSecond: number; seconds: number },
): Promise<WrittenWebhook[]> {
  const { partyIds, perSecond, seconds } = options;
  const total = Math.round(perSecond * seconds);
  const acknowledged = new Map<number, number>();
  const writes: Promise<void>[] = [];
  const started = performance.now();
  for (let i = 0; i < total; i++) {
    const wait = started + (i * 1000) / perSecond - performance.now();
    if (wait > 0) await sleep(wait);
    const change = propertyChange(partyIds[i % partyIds.length]!, i + 1, {}, MEASURED_TYPE);
    writes.push(
      seedChange(knex, change).then((ids) => {
        const committedAt = wallClock();
        for (const id of ids) acknowledged.set(id, committedAt);
      }),
    );
  }
  await Promise.all(writes);
  const { rows } = await knex.raw<{
    rows: { id: number; registration_id: number; committed_at: number | null }[];
  }>(
    `select w.id, w.registration_id,
            case when current_setting('track_commit_timestamp') = 'on'
                 then extract(epoch from pg_xact_commit_timestamp(c.xmin)) * 1000 end as committed_at
       from webhooks w join entity_changes c on c.id = w.entity_change_id
      where w.id = any(?)`,
    [[...acknowledged.keys()]],
  );
  return rows.map((row) => ({
    id: row.id,
    registrationId: row.registration_id,
    committedAt: row.committed_at === null ? acknowledged.get(row.id)! : Number(row.committed_at),
  }));
}

/** A delivery as a target saw it: the webhook id and the wall clock (epoch ms) of its receipt. */
export interface Receipt {
  webhookId: number;
  receivedAt: number;
}

/**
 * The latency of each webhook of `written` that went to one of `registrationIds`: its first
 * receipt minus its change's commit; Infinity for one not received (yet).
 */
export function latenciesOf(
  written: readonly WrittenWebhook[],
  registrationIds: readonly number[],
  receipts: Iterable<Receipt>,
): number[] {
  const first = new Map<number, number>();
  for (const { webhookId, receivedAt } of receipts)
    if (!first.has(webhookId) || receivedAt < first.get(webhookId)!) first.set(webhookId, receivedAt);
  const wanted = new Set(registrationIds);
  return written
    .filter((webhook) => wanted.has(webhook.registrationId))
    .map((webhook) => (first.get(webhook.id) ?? Infinity) - webhook.committedAt);
}

/** Count, median, 99th percentile and maximum of latencies, in ms. */
export interface LatencySummary {
  count: number;
  /** Of them, never received (an infinite latency). */
  undelivered: number;
  p50Ms: number;
  p99Ms: number;
  maxMs: number;
}

export function summarizeLatencies(latencies: readonly number[]): LatencySummary {
  const sorted = [...latencies].sort((a, b) => a - b);
  return {
    count: sorted.length,
    undelivered: sorted.filter((ms) => ms === Infinity).length,
    p50Ms: quantile(sorted, 0.5),
    p99Ms: quantile(sorted, 0.99),
    maxMs: sorted[sorted.length - 1] ?? NaN,
  };
}

/** What one phase measured: deliveries to the healthy tenants, and to the dead tenant's second endpoint. */
export interface IsolationPhase {
  healthy: LatencySummary;
  sibling: LatencySummary;
}

/**
 * One measured phase: `writeSteadily` at `perSecond` for `seconds`, every other write the dead
 * tenant's (`[h1, dead, h2, dead, …]`, so its second endpoint gets as many samples as the ten
 * others together), then waits until every delivery to the healthy endpoints has arrived, or
 * ISOLATION.giveUpMs have passed since the last write: one not received by then counts as never
 * (an infinite latency), so a dispatcher without isolation fails with its figures rather than a
 * timeout. `receipts` answers what the targets have received so far.
 */
export async function measureIsolationPhase(
  knex: Knex,
  cast: IsolationCast,
  options: {
    perSecond: number;
    seconds: number;
    receipts(): readonly Receipt[] | Promise<readonly Receipt[]>;
    /** The dispatcher: waiting stops if it dies. */
    watch?: Watched;
  },
): Promise<IsolationPhase> {
  const partyIds = cast.healthy.flatMap(({ partyId }) => [partyId, cast.deadPartyId]);
  const written = await writeSteadily(knex, {
    partyIds,
    perSecond: options.perSecond,
    seconds: options.seconds,
  });
  const healthyIds = cast.healthy.map((h) => h.registrationId);
  const giveUpAt = wallClock() + ISOLATION.giveUpMs;
  let healthy: number[] = [];
  let sibling: number[] = [];
  await eventually(
    async () => {
      const receipts = await options.receipts();
      healthy = latenciesOf(written, healthyIds, receipts);
      sibling = latenciesOf(written, [cast.siblingRegistrationId], receipts);
      return [...healthy, ...sibling].every(Number.isFinite) || wallClock() > giveUpAt;
    },
    // the check itself gives up; this only stops a wait whose receipts keep failing
    {
      timeoutMs: ISOLATION.giveUpMs + 10_000,
      what: 'the healthy deliveries of a phase',
      watch: options.watch,
    },
  );
  return { healthy: summarizeLatencies(healthy), sibling: summarizeLatencies(sibling) };
}

/**
 * Below this a p99 is noise, not a baseline. From commit to receipt a delivery on 127.0.0.1 takes
 * about 2 ms, and the p99 of a 5-second phase ranged from 3 to 36 ms on a quiet 2-core machine;
 * with other test runs sharing its cores (load average 6 to 10) a phase's p99 reached 84 ms with
 * nothing wrong, from scheduling alone. "Twice 5 ms" would measure the machine, not the
 * dispatcher: the comparison takes the baseline as at least this. A delivery that the dead
 * endpoint does hold up waits for its timeout (2 s in the test, 15 s by default), ten times the
 * 200 ms this allows, so the figure still tells isolation from its absence.
 */
export const ISOLATION_FLOOR_MS = 100;

/**
 * The isolation figure: the p99 with the dead endpoint over the p99 without it,
 * that baseline no lower than ISOLATION_FLOOR_MS. Isolation holds while it is at most 2.
 */
export function isolationRatio(p99WithoutMs: number, p99WithMs: number): number {
  return p99WithMs / Math.max(p99WithoutMs, ISOLATION_FLOOR_MS);
}

/**
 * Issue 27's criterion for one kind of healthy endpoint, measured without the dead endpoint's
 * backlog and with it: what breaks it, one line each; none while isolation holds. With the
 * backlog due, the p99 is at most twice the p99 without it (`isolationRatio`, over the floor),
 * and every delivery arrives, none later than ISOLATION.latestMs after its write.
 */
export function isolationBreaches(without: LatencySummary, withDead: LatencySummary): string[] {
  const breaches: string[] = [];
  const ratio = isolationRatio(without.p99Ms, withDead.p99Ms);
  if (!(ratio <= 2))
    breaches.push(
      `p99 ${withDead.p99Ms.toFixed(0)} ms is ${ratio.toFixed(2)} × max(${without.p99Ms.toFixed(0)}, ${ISOLATION_FLOOR_MS}) ms (at most 2)`,
    );
  if (withDead.undelivered > 0)
    breaches.push(
      `${withDead.undelivered} of ${withDead.count} never arrived within ${ISOLATION.giveUpMs} ms`,
    );
  else if (withDead.maxMs > ISOLATION.latestMs)
    breaches.push(
      `the latest arrived ${withDead.maxMs.toFixed(0)} ms after its write (at most ${ISOLATION.latestMs})`,
    );
  return breaches;
}
