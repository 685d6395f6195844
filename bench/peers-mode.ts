import { execFile, spawn } from 'node:child_process';
import { createHash } from 'node:crypto';
import { cp, mkdir, readFile, writeFile } from 'node:fs/promises';
import { existsSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import { promisify } from 'node:util';
import { deliveryBody, ENQUEUE_ENTITY_CHANGE_SQL, enqueueBindings } from '@platform/db';
import { buildBundle, bundleFile, ROOT } from '@platform/testkit';
import type { BenchContext } from './context';
import { round } from './drain';
import { positional } from './positional';
import { floorFigures, queueFigures } from './queue-mode';
import { seedParty, seedRegistration } from './seed';

/** The harness (README "Adding our dispatcher to the same run"); BENCH_PEERS_DIR overrides. */
const HARNESS = process.env.BENCH_PEERS_DIR ?? resolve(ROOT, '../shared/bench-peers');
const ADAPTER = join(ROOT, 'bench/peers/platform.mjs');
const OURS = 'platform';
const GRAPHILE = 'graphile-worker';
const SUBJECTS = [OURS, GRAPHILE, 'pg-boss'];
const PEERS = SUBJECTS.filter((subject) => subject !== OURS);
export const MODES = ['throughput', 'latency', 'ordered'] as const;
export type Mode = (typeof MODES)[number];
const LIMITS = { http: 'L1 raw HTTP', db: 'L2 raw DB insert', 'http+db': 'L3 HTTP+insert, no queue' };

/** A latency summary of the harness, in ms. */
interface Latency {
  p50: number;
  p95: number;
  p99: number;
}

/** One phase of a harness run (results/latest.json), as far as this mode reads it. */
export interface HarnessRow {
  subject: string;
  kind: 'limit' | 'peer';
  mode: string;
  n?: number;
  rate?: number;
  drainRate?: number;
  duplicates?: number;
  uniqueAttempts?: number;
  targetCount?: number;
  queueRemaining?: number;
  orderingViolations?: number;
  missingSeqs?: number;
  sent?: number;
  received?: number;
  latencyMs?: Latency;
  errors?: number | null;
  timedOut?: boolean;
  cpu: {
    workerMsPerDelivery: number | null;
    machineMsPerDelivery: number | null;
    foreignShare: number | null;
    stealShare: number | null;
  };
}

/** A webhook of the harness (lib/common.mjs, makeWebhook). */
interface HarnessWebhook {
  id: string;
  group: string | null;
  seq: number | null;
  entity: object;
}

/**
 * One harness run: the queue statements alone and their floor measured just before it (NaN when
 * the throughput mode, the one their composite limit is for, did not run), and its phases.
 */
export interface Round {
  queuePerSecond: number;
  /** The floor of the queue statements (`--queue`'s `floorPerSecond`), measured after them. */
  floorPerSecond: number;
  rows: HarnessRow[];
}

const median = (values: number[]): number => {
  const sorted = values.filter(Number.isFinite).sort((a, b) => a - b);
  const mid = sorted.length >> 1;
  return sorted.length % 2 ? sorted[mid]! : (sorted[mid - 1]! + sorted[mid]!) / 2;
};

/** `list` turned left by `by` places: the order of round `by + 1`. */
const rotate = <T>(list: readonly T[], by: number): T[] => list.map((_, i) => list[(i + by) % list.length]!);

/**
 * The peers mode: our dispatcher in the peer benchmark's own run, in its three modes
 * (throughput, latency, ordered), beside graphile-worker and pg-boss. The harness is copied to a
 * temporary folder and installed there (npm ci, kept while its lock file is unchanged), our
 * adapter (bench/peers/platform.mjs) is added to it, and each round runs the queue statements
 * alone (the `--queue` figure, no HTTP), then one harness run: the limits L1-L3, then every
 * subject's three modes, subjects and modes in an order rotated by one each round. Answers each
 * figure per round and its median, and our ratios to the peers and limits, each the median of
 * its per-round ratios (docs/performance.md#peers-three-modes).
 */
export async function peersMode(
  context: BenchContext,
  options: { rounds: number; count: number; modes?: readonly Mode[] },
) {
  // the modes asked for (all by default); the queue statements and the limits are for the
  // throughput mode's ratios, so a run without it skips them
  const asked = MODES.filter((mode) => !options.modes || options.modes.includes(mode));
  const withThroughput = asked.includes('throughput');
  const { cluster, log } = context;
  const harness = await installHarness(log);
  await buildBundle('dispatcher');

  // every harness database of ours becomes a clone of this one (the adapter's setup)
  const template = await cluster.create('peers_template');
  const partyId = await seedParty(template.knex);
  await seedRegistration(template.knex, {
    partyId,
    // replaced by the harness target's URL when the worker starts
    targetUrl: 'http://127.0.0.1:9/hook',
    // the adapter groups it for the ordered mode
    shouldGroup: false,
    secrets: context.secrets,
    signingSecret: context.signingSecret,
  });
  await template.knex.destroy(); // a template must have no connections

  // the API's fan-out statement and the bindings every change of the run shares (the adapter
  // sets the entity id, entity and group key per change)
  const {
    entityId: _entityId,
    entity: _entity,
    groupKey: _groupKey,
    ...bindings
  } = enqueueBindings({
    entityName: 'Property',
    type: 2,
    entityId: 0,
    entity: null,
    initiatorPartyId: partyId,
    initiatorAccountId: null,
  });
  const env = {
    ...process.env,
    BENCH_PG_ADMIN_URL: cluster.adminUrl,
    PLATFORM_BUNDLE: join(ROOT, bundleFile('dispatcher')),
    PLATFORM_TEMPLATE_DB: template.name,
    PLATFORM_SECRET_KEY: context.stack(template.url).secretKey,
    PLATFORM_DATA_DIR: context.stack(template.url).dataDir,
    PLATFORM_ENQUEUE: JSON.stringify({ ...positional(ENQUEUE_ENTITY_CHANGE_SQL), bindings }),
  };
  const rounds: Round[] = [];
  for (let index = 0; index < options.rounds; index++) {
    const subjects = rotate(SUBJECTS, index);
    const modes = rotate(asked, index);
    let queuePerSecond = NaN;
    let floorPerSecond = NaN;
    if (withThroughput) {
      log(`peers: round ${index + 1} of ${options.rounds}: the queue statements alone, then their floor`);
      queuePerSecond = (await queueFigures(context, options.count, false, `peers_queue_${index + 1}`))
        .perSecond;
      floorPerSecond = (await floorFigures(context, options.count, `peers_floor_${index + 1}`)).perSecond;
    }
    log(
      `peers: round ${index + 1}: ${withThroughput ? 'limits, then ' : ''}${subjects.join(', ')}, each ${modes.join(', ')}`,
    );
    const out = join(harness, 'results', `round-${index + 1}`);
    await runHarness(harness, env, [
      ...[
        '--peers',
        subjects.join(','),
        '--modes',
        modes.join(','),
        '--limits',
        withThroughput ? Object.keys(LIMITS).join(',') : '',
      ],
      ...['--n', String(options.count), '--ordered-n', String(options.count)],
      ...['--concurrency', String(context.concurrency), '--out', out],
    ]);
    const latest = JSON.parse(await readFile(join(out, 'latest.json'), 'utf8')) as { results: HarnessRow[] };
    rounds.push({ queuePerSecond, floorPerSecond, rows: latest.results });
  }
  const result = summarize(rounds, options.count, await bodySizes(harness), asked);
  for (const problem of result.problems) log(`peers: PROBLEM: ${problem}`);
  return result;
}

/**
 * Read by the copy's target for a delivery without `x-webhook-id` (ours): the harness webhook's
 * id, group and seq from the `harness` object the adapter puts in the entity, so duplicates,
 * order and latency are checked for us as for the peers. The receive time is taken when the
 * headers arrive, as for the peers; it is recorded once the body is read, before the answer (so
 * before our dispatcher can send the group's next webhook).
 */
const TARGET_READS_BODY = `
function recordFromBody(req, res, t) {
  const chunks = [];
  req.on('data', (chunk) => chunks.push(chunk));
  req.on('end', () => {
    const found = /"harness":\\s*(\\{[^}]*\\})/.exec(Buffer.concat(chunks).toString());
    const h = found ? JSON.parse(found[1]) : { id: req.headers['webhook-id'], group: null, seq: null };
    record(h.id, h.group ?? null, h.seq ?? null, t);
    res.writeHead(200, { 'content-length': '0' });
    res.end();
  });
}
`;

/**
 * The harness in a temporary folder with its packages installed, our adapter in its peers/ and
 * its target reading our deliveries' harness identity from their bodies (TARGET_READS_BODY).
 */
async function installHarness(log: (message: string) => void): Promise<string> {
  if (!existsSync(join(HARNESS, 'run.mjs'))) {
    throw new Error(`no peer benchmark in ${HARNESS}; set BENCH_PEERS_DIR to its folder`);
  }
  const lock = await readFile(join(HARNESS, 'package-lock.json'));
  const dir = join(
    tmpdir(),
    `platform-bench-peers-${createHash('sha256').update(lock).digest('hex').slice(0, 12)}`,
  );
  await mkdir(dir, { recursive: true });
  for (const entry of ['package.json', 'package-lock.json', 'run.mjs', 'summarize.mjs', 'lib', 'peers']) {
    await cp(join(HARNESS, entry), join(dir, entry), { recursive: true, force: true });
  }
  if (!existsSync(join(dir, 'node_modules'))) {
    log(`peers: npm ci in ${dir}`);
    await promisify(execFile)('npm', ['ci', '--no-audit', '--no-fund'], { cwd: dir });
  }
  await cp(ADAPTER, join(dir, 'peers/platform.mjs'), { force: true });
  const targetFile = join(dir, 'lib/target.mjs');
  const target = await readFile(targetFile, 'utf8');
  const read = "const id = req.headers['x-webhook-id'];";
  if (!target.includes(read)) throw new Error(`the harness target no longer reads ${read}`);
  const patched = target.replace(
    read,
    `if (req.headers['x-webhook-id'] === undefined) return recordFromBody(req, res, t);\n    ${read}`,
  );
  await writeFile(targetFile, patched + TARGET_READS_BODY);
  return dir;
}
/** Runs the harness with `args`; its table and progress go to stderr (stdout carries our JSON). */
async function runHarness(dir: string, env: NodeJS.ProcessEnv, args: string[]): Promise<void> {
  const child = spawn(process.execPath, ['run.mjs', ...args], { cwd: dir, env, stdio: ['ignore', 2, 2] });
  const code = await new Promise<number | null>((done) => child.on('exit', done));
  if (code !== 0) throw new Error(`the peer benchmark exited with ${code}`);
}

/** The body the peers POST and ours (docs/webhooks.md#the-delivery-request around the same entity and its identity), in bytes. */
async function bodySizes(dir: string) {
  const harness = (await import(pathToFileURL(join(dir, 'lib/common.mjs')).href)) as {
    BODY_BYTES: number;
    makeWebhook(tag: string, i: number, group: string, seq: number): HarnessWebhook;
  };
  // the webhook BODY_BYTES is measured on, with the identity the adapter adds to the entity
  const webhook = harness.makeWebhook('r0000', 12345, 'g42', 123);
  const ours = JSON.stringify(
    deliveryBody(
      {
        entity: { ...webhook.entity, harness: { id: webhook.id, group: webhook.group, seq: webhook.seq } },
        initiator_party_id: 1,
        initiator_account_id: null,
      },
      { id: 1, type: 2, entity_name: 'Property', created: new Date(), last_modified: null, deleted: null },
    ),
  );
  return { peers: harness.BODY_BYTES, platform: Buffer.byteLength(ours) };
}

/** What went wrong in one phase: duplicates, order violations, missing work, errors, a time-out. */
function problemsOf(row: HarnessRow): string[] {
  const problems: string[] = [];
  if (row.duplicates) problems.push(`${row.duplicates} duplicate deliveries`);
  if (row.orderingViolations) problems.push(`${row.orderingViolations} order violations`);
  if (row.missingSeqs) problems.push(`${row.missingSeqs} missing seqs`);
  // the throughput mode counts attempt rows, the ordered mode the target's deliveries
  if (row.mode === 'throughput' && row.uniqueAttempts !== row.n) {
    problems.push(`${row.uniqueAttempts} of ${row.n} attempt rows`);
  }
  if (row.mode === 'ordered' && (row.targetCount ?? 0) - (row.duplicates ?? 0) < (row.n ?? 0)) {
    problems.push(`${row.targetCount} of ${row.n} delivered`);
  }
  if (row.mode === 'latency' && (row.received ?? 0) - (row.duplicates ?? 0) < (row.sent ?? 0)) {
    problems.push(`${row.received} of ${row.sent} received`);
  }
  if (row.queueRemaining) problems.push(`${row.queueRemaining} left in the queue`);
  if (row.errors) problems.push(`${row.errors} errors`);
  if (row.timedOut) problems.push('timed out');
  return problems;
}

/** A ratio per round, and the median of those: how every ratio of the output is given. */
function ratio(numerator: number[], denominator: number[], digits = 2) {
  const rounds = numerator.map((value, i) => value / denominator[i]!);
  return { median: round(median(rounds), digits), rounds: rounds.map((value) => round(value, digits)) };
}

/** The JSON the peers mode prints, from the harness's results of each round. */
export function summarize(
  rounds: Round[],
  count: number,
  bodyBytes: { peers: number; platform: number },
  modes: readonly Mode[] = MODES,
) {
  // phase of `subject` in `mode` (a limit's mode is its key) per round
  const phase = (subject: string, mode: string) =>
    rounds.map(({ rows }) => rows.find((row) => row.subject === subject && row.mode === mode));
  const per = (rows: (HarnessRow | undefined)[], pick: (row: HarnessRow) => number | null | undefined) =>
    rows.map((row) => (row ? (pick(row) ?? NaN) : NaN));
  const problems: string[] = [];
  // the figures every phase has: CPU per delivery and the machine's noise, per round
  const common = (label: string, rows: (HarnessRow | undefined)[]) => {
    rows.forEach((row, i) => {
      if (!row) problems.push(`${label} round ${i + 1}: no result`);
      else for (const problem of problemsOf(row)) problems.push(`${label} round ${i + 1}: ${problem}`);
    });
    const machineMs = per(rows, (row) => row.cpu.machineMsPerDelivery);
    return {
      machineMsPerDelivery: round(median(machineMs), 3),
      machineMsRounds: machineMs,
      workerMsPerDelivery: round(median(per(rows, (row) => row.cpu.workerMsPerDelivery)), 3),
      // shares of the machine taken meanwhile by other processes and by the hypervisor
      foreignShare: per(rows, (row) => row.cpu.foreignShare),
      stealShare: per(rows, (row) => row.cpu.stealShare),
    };
  };
  const rate = (rows: (HarnessRow | undefined)[]) => {
    const perSecond = per(rows, (row) => (row.kind === 'limit' ? row.rate : row.drainRate));
    return { perSecond: round(median(perSecond)), rounds: perSecond };
  };
  const modeFigures = (subject: string, mode: Mode) => {
    const rows = phase(subject, mode);
    const label = `${subject} ${mode}`;
    const counts = {
      duplicates: per(rows, (row) => row.duplicates),
      ...(mode === 'ordered' ? { orderViolations: per(rows, (row) => row.orderingViolations) } : {}),
    };
    if (mode !== 'latency') return { ...rate(rows), ...counts, ...common(label, rows) };
    const latency = (key: keyof Latency) => per(rows, (row) => row.latencyMs?.[key]);
    return {
      // target receive time minus the time the enqueue's commit was acknowledged, ms
      p50: round(median(latency('p50')), 2),
      p95: round(median(latency('p95')), 2),
      p99: round(median(latency('p99')), 2),
      p50Rounds: latency('p50'),
      p99Rounds: latency('p99'),
      ...counts,
      ...common(label, rows),
    };
  };
  const subjects = Object.fromEntries(
    SUBJECTS.map((subject) => [
      subject,
      Object.fromEntries(modes.map((mode) => [mode, modeFigures(subject, mode)])),
    ]),
  );
  const has = (mode: Mode) => modes.includes(mode);
  const limits = Object.fromEntries(
    Object.entries(has('throughput') ? LIMITS : {}).map(([key, subject]) => {
      const rows = phase(subject, key);
      return [key, { ...rate(rows), ...common(`${subject}`, rows) }];
    }),
  );

  const drain = (subject: string, mode: 'throughput' | 'ordered') =>
    per(phase(subject, mode), (row) => row.drainRate);
  const latency = (subject: string, key: keyof Latency) =>
    per(phase(subject, 'latency'), (row) => row.latencyMs?.[key]);
  const cpu = (subject: string) => per(phase(subject, 'throughput'), (row) => row.cpu.machineMsPerDelivery);
  const l1 = per(phase(LIMITS.http, 'http'), (row) => row.rate);
  const composite = rounds.map(({ queuePerSecond }, i) => 1 / (1 / l1[i]! + 1 / queuePerSecond));
  // the same limit with the queue statements at their floor: what no queue doing this work passes
  const compositeAtFloor = rounds.map(({ floorPerSecond }, i) => 1 / (1 / l1[i]! + 1 / floorPerSecond));
  const bestPeerOrdered = rounds.map((_, i) => Math.max(...PEERS.map((peer) => drain(peer, 'ordered')[i]!)));
  return {
    mode: 'peers',
    webhooks: count,
    rounds: rounds.length,
    order: 'per round: the queue statements alone, the limits, then subjects and modes rotated by one',
    bodyBytes,
    subjects,
    limits,
    queuePerSecond: round(median(rounds.map((r) => r.queuePerSecond))),
    queueRounds: rounds.map((r) => r.queuePerSecond),
    compositeLimitPerSecond: round(median(composite)),
    compositeRounds: composite.map((value) => round(value)),
    floorPerSecond: round(median(rounds.map((r) => r.floorPerSecond))),
    floorRounds: rounds.map((r) => r.floorPerSecond),
    compositeAtFloorPerSecond: round(median(compositeAtFloor)),
    compositeAtFloorRounds: compositeAtFloor.map((value) => round(value)),
    // each the median of the per-round ratios, beside those ratios
    ratios: Object.fromEntries(
      Object.entries({
        drainVsGraphileWorker: [
          'throughput',
          () => ratio(drain(OURS, 'throughput'), drain(GRAPHILE, 'throughput')),
        ],
        drainVsPgBoss: ['throughput', () => ratio(drain(OURS, 'throughput'), drain('pg-boss', 'throughput'))],
        drainOfCompositeLimit: ['throughput', () => ratio(drain(OURS, 'throughput'), composite, 3)],
        drainOfCompositeAtFloor: ['throughput', () => ratio(drain(OURS, 'throughput'), compositeAtFloor, 3)],
        graphileWorkerOfCompositeAtFloor: [
          'throughput',
          () => ratio(drain(GRAPHILE, 'throughput'), compositeAtFloor, 3),
        ],
        queueOfFloor: [
          'throughput',
          () =>
            ratio(
              rounds.map((r) => r.queuePerSecond),
              rounds.map((r) => r.floorPerSecond),
              3,
            ),
        ],
        machineCpuVsGraphileWorker: ['throughput', () => ratio(cpu(OURS), cpu(GRAPHILE))],
        orderedVsBestPeerOrdered: ['ordered', () => ratio(drain(OURS, 'ordered'), bestPeerOrdered)],
        orderedVsOurUnordered: ['ordered', () => ratio(drain(OURS, 'ordered'), drain(OURS, 'throughput'))],
        latencyP50VsGraphileWorker: ['latency', () => ratio(latency(OURS, 'p50'), latency(GRAPHILE, 'p50'))],
        latencyP99VsGraphileWorker: ['latency', () => ratio(latency(OURS, 'p99'), latency(GRAPHILE, 'p99'))],
      } satisfies Record<string, [Mode, () => ReturnType<typeof ratio>]>)
        .filter(([name, [mode]]) => has(mode) && (name !== 'orderedVsOurUnordered' || has('throughput')))
        .map(([name, [, figure]]) => [name, figure()]),
    ),
    // duplicates, order violations, missing attempts, errors, time-outs: none in a sound run
    problems,
  };
}
