import { execFile, spawn } from 'node:child_process';
import { createHash } from 'node:crypto';
import { cp, mkdir, readFile, writeFile } from 'node:fs/promises';
import { existsSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import { promisify } from 'node:util';
import { deliveryBody } from '@platform/db';
import { buildBundle, bundleFile, ROOT } from '@platform/testkit';
import type { BenchContext } from './context';
import { round } from './drain';
import { queueFigures } from './queue-mode';
import { seedParty, seedRegistration } from './seed';

/** The harness (README "Adding our dispatcher to the same run"); BENCH_PEERS_DIR overrides. */
const HARNESS = process.env.BENCH_PEERS_DIR ?? resolve(ROOT, '../shared/bench-peers');
const ADAPTER = join(ROOT, 'bench/peers/platform.mjs');
const SUBJECTS = ['platform', 'graphile-worker', 'pg-boss'];
const LIMITS = { http: 'L1 raw HTTP', db: 'L2 raw DB insert', 'http+db': 'L3 HTTP+insert, no queue' };

/** One phase of a harness run (results/latest.json), as far as this mode reads it. */
interface HarnessRow {
  subject: string;
  kind: 'limit' | 'peer';
  mode: string;
  rate?: number;
  drainRate?: number;
  duplicates?: number;
  attempts?: number;
  uniqueAttempts?: number;
  queueRemaining?: number;
  errors?: number | null;
  timedOut?: boolean;
  cpu: {
    workerMsPerDelivery: number | null;
    machineMsPerDelivery: number | null;
    foreignShare: number | null;
    stealShare: number | null;
  };
}

/** One subject's figures over the rounds. */
interface Series {
  perSecond: number[];
  machineMs: number[];
  workerMs: number[];
  /** Largest share of the machine taken by foreign load or steal in any round. */
  noise: number;
  /** What went wrong in any round: duplicates, missing attempt rows, errors, a time-out. */
  problems: string[];
}

const median = (values: number[]): number => {
  const sorted = values.filter(Number.isFinite).sort((a, b) => a - b);
  const mid = sorted.length >> 1;
  return sorted.length % 2 ? sorted[mid]! : (sorted[mid - 1]! + sorted[mid]!) / 2;
};

/**
 * The peers mode (docs/performance.md#the-modes): our dispatcher in the peer benchmark's own run, interleaved
 * with graphile-worker and pg-boss. The harness is copied to a temporary folder and installed
 * there (npm ci, kept while its lock file is unchanged), our adapter (bench/peers/platform.mjs)
 * is added to it, and each round runs, in this order: the queue statements alone (the `--queue`
 * figure, no HTTP), then one harness run of the limits L1-L3 and the throughput mode of our
 * dispatcher, graphile-worker and pg-boss. Answers the medians over the rounds, and per round the
 * composite limit 1 / (1 / L1 raw HTTP + 1 / queue statements).
 */
export async function peersMode(context: BenchContext, options: { rounds: number; count: number }) {
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
    shouldGroup: false,
    secrets: context.secrets,
    signingSecret: context.signingSecret,
  });
  await template.knex.destroy(); // a template must have no connections

  const env = {
    ...process.env,
    BENCH_PG_ADMIN_URL: cluster.adminUrl,
    PLATFORM_BUNDLE: join(ROOT, bundleFile('dispatcher')),
    PLATFORM_TEMPLATE_DB: template.name,
    PLATFORM_SECRET_KEY: context.stack(template.url).secretKey,
    PLATFORM_DATA_DIR: context.stack(template.url).dataDir,
  };
  const rounds: { queuePerSecond: number; rows: HarnessRow[] }[] = [];
  for (let round = 1; round <= options.rounds; round++) {
    log(`peers: round ${round} of ${options.rounds}: the queue statements alone`);
    const queue = await queueFigures(context, options.count, false, `peers_queue_${round}`);
    log(`peers: round ${round}: limits, then ${SUBJECTS.join(', ')} (${queue.perSecond}/s queue)`);
    const out = join(harness, 'results', `round-${round}`);
    await runHarness(harness, env, [
      ...['--peers', SUBJECTS.join(','), '--modes', 'throughput', '--limits', Object.keys(LIMITS).join(',')],
      ...['--n', String(options.count), '--concurrency', String(context.concurrency), '--out', out],
    ]);
    const latest = JSON.parse(await readFile(join(out, 'latest.json'), 'utf8')) as { results: HarnessRow[] };
    rounds.push({ queuePerSecond: queue.perSecond, rows: latest.results });
  }
  return summarize(rounds, options.count, await bodySizes(harness));
}

/**
 * The harness in a temporary folder with its packages installed and our adapter in its peers/.
 * Its target identifies a delivery by `x-webhook-id`; ours carry the Standard Webhooks
 * `webhook-id` (the webhook's id, unique per webhook), which the copy reads when the other is
 * absent, so duplicates are counted for us as for the peers.
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
  const read = "req.headers['x-webhook-id']";
  if (!target.includes(read)) throw new Error(`the harness target no longer reads ${read}`);
  await writeFile(targetFile, target.replace(read, `(${read} ?? req.headers['webhook-id'])`));
  return dir;
}

/** Runs the harness with `args`; its table and progress go to stderr (stdout carries our JSON). */
async function runHarness(dir: string, env: NodeJS.ProcessEnv, args: string[]): Promise<void> {
  const child = spawn(process.execPath, ['run.mjs', ...args], { cwd: dir, env, stdio: ['ignore', 2, 2] });
  const code = await new Promise<number | null>((done) => child.on('exit', done));
  if (code !== 0) throw new Error(`the peer benchmark exited with ${code}`);
}

/** The body the peers POST and ours (docs/webhooks.md#the-delivery-request around the same entity), in bytes. */
async function bodySizes(dir: string) {
  const harness = (await import(pathToFileURL(join(dir, 'lib/common.mjs')).href)) as {
    BODY_BYTES: number;
    makeWebhook(tag: string, i: number): { entity: unknown };
  };
  const ours = JSON.stringify(
    deliveryBody(
      {
        entity: harness.makeWebhook('r0000', 12345).entity,
        initiator_party_id: 1,
        initiator_account_id: null,
      },
      { id: 1, type: 2, entity_name: 'Property', created: new Date(), last_modified: null, deleted: null },
    ),
  );
  return { peers: harness.BODY_BYTES, platform: Buffer.byteLength(ours) };
}

function summarize(
  rounds: { queuePerSecond: number; rows: HarnessRow[] }[],
  count: number,
  bodyBytes: { peers: number; platform: number },
) {
  const series = new Map<string, Series>();
  for (const { rows } of rounds) {
    for (const row of rows) {
      const s = series.get(row.subject) ?? {
        perSecond: [],
        machineMs: [],
        workerMs: [],
        noise: 0,
        problems: [],
      };
      s.perSecond.push((row.kind === 'limit' ? row.rate : row.drainRate) ?? NaN);
      s.machineMs.push(row.cpu.machineMsPerDelivery ?? NaN);
      s.workerMs.push(row.cpu.workerMsPerDelivery ?? NaN);
      s.noise = Math.max(s.noise, row.cpu.foreignShare ?? 0, row.cpu.stealShare ?? 0);
      if (row.kind === 'peer') {
        if (row.duplicates) s.problems.push(`${row.duplicates} duplicate deliveries`);
        if (row.uniqueAttempts !== count) s.problems.push(`${row.uniqueAttempts} of ${count} attempt rows`);
        if (row.queueRemaining) s.problems.push(`${row.queueRemaining} left in the queue`);
      }
      if (row.errors) s.problems.push(`${row.errors} errors`);
      if (row.timedOut) s.problems.push('timed out');
      series.set(row.subject, s);
    }
  }
  const at = (subject: string, round: number) => series.get(subject)?.perSecond[round] ?? NaN;
  const figures = (s: Series | undefined) =>
    s && {
      perSecond: round(median(s.perSecond)),
      rounds: s.perSecond.map((x) => round(x)),
      machineMsPerDelivery: round(median(s.machineMs), 3),
      workerMsPerDelivery: round(median(s.workerMs), 3),
      noise: round(s.noise, 3),
      ...(s.problems.length > 0 ? { problems: s.problems } : {}),
    };
  // per round, from the figures of that round; then the median of each
  const composite = rounds.map(({ queuePerSecond }, i) => 1 / (1 / at(LIMITS.http, i) + 1 / queuePerSecond));
  const ours = rounds.map((_, i) => at('platform', i));
  return {
    mode: 'peers',
    webhooks: count,
    rounds: rounds.length,
    bodyBytes,
    subjects: Object.fromEntries(SUBJECTS.map((subject) => [subject, figures(series.get(subject))])),
    limits: Object.fromEntries(
      Object.entries(LIMITS).map(([key, subject]) => [key, figures(series.get(subject))]),
    ),
    queuePerSecond: round(median(rounds.map((r) => r.queuePerSecond))),
    queueRounds: rounds.map((r) => r.queuePerSecond),
    compositeLimitPerSecond: round(median(composite)),
    vsGraphileWorker: round(median(ours.map((x, i) => x / at('graphile-worker', i))), 2),
    vsPgBoss: round(median(ours.map((x, i) => x / at('pg-boss', i))), 2),
    ofCompositeLimit: round(median(ours.map((x, i) => x / composite[i]!)), 3),
  };
}
