/**
 * Two builds of the API, A and B, side by side on one database: the API mode's GET (the first page
 * of 20 properties) and PATCH (a property, 10 subscribed registrations) for `--seconds` each, in
 * interleaved rounds (A, B, A, B, …), 32 clients. Answers, per build and route, the medians of
 * the rate, of the API process's CPU milliseconds per request and of the machine's, and B's
 * ratio to A. CPU per request is the figure to trust on a busy machine.
 *
 *   npx tsx bench/api-ab.ts A B [--rounds 3] [--seconds 3] [--route get|patch|both] [--profile DIR]
 *
 * A and B are entry files: a bundle (`.mjs`, run with the Node flags of the API's `start` script;
 * build one with `node apps/api/build.mjs` and copy it beside `apps/api/dist/main.mjs`, where it
 * finds its packages) or `apps/api/src/main.ts` (run through tsx). Node flags after the file
 * replace production's: `'apps/api/dist/main.mjs --max-semi-space-size=32'`. Uses DATABASE_URL or an embedded
 * Postgres, as `pnpm bench` does; no dispatcher runs, so PATCH's webhooks stay due. `--profile`
 * writes both processes' CPU profiles into DIR (sum them with bench/profile-summary.ts).
 */
import { randomBytes } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { refusingUrl, setChildNodeArgs, stopAll } from '@platform/testkit';
import { connect, seedBenchAccount, signIn, type ApiClient } from './api-client';
import { closedLoop, LIST_REQUEST, seedApiWorkload, type Phase } from './api-mode';
import { openCluster } from './database';
import { round } from './drain';
import { startApi } from './stack';

const { values, positionals } = parseArgs({
  allowPositionals: true,
  options: {
    rounds: { type: 'string', default: '3' },
    seconds: { type: 'string', default: '3' },
    route: { type: 'string', default: 'both' },
    profile: { type: 'string' },
  },
});
if (positionals.length !== 2 || !['get', 'patch', 'both'].includes(values.route)) {
  console.error('usage: tsx bench/api-ab.ts A B [--rounds 3] [--seconds 3] [--route get|patch|both]');
  process.exit(2);
}
const rounds = Number(values.rounds);
const seconds = Number(values.seconds);
const routes = values.route === 'both' ? ['get', 'patch'] : [values.route];
const CLIENTS = 32;
const log = (message: string) => process.stderr.write(`[api-ab] ${message}\n`);

const median = (values: number[]) => {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.floor(sorted.length / 2)]!;
};

async function main(): Promise<void> {
  if (values.profile) setChildNodeArgs(['--cpu-prof', `--cpu-prof-dir=${values.profile}`]);
  const cluster = await openCluster(process.env.DATABASE_URL || undefined);
  const dataDir = await mkdtemp(join(tmpdir(), 'api-ab-'));
  try {
    const db = await cluster.create('ab');
    const account = await seedBenchAccount(db.knex);
    // both builds generate or read the one JWT key in dataDir: a token of one is good on the other
    const stack = {
      databaseUrl: db.url,
      secretKey: randomBytes(32).toString('base64'),
      dataDir,
      concurrency: CLIENTS,
    };
    const start = (build: string) => {
      const words = build.split(' ').filter(Boolean);
      const flags = words.filter((word) => word.startsWith('--'));
      const entry = words.find((word) => !word.startsWith('--'))!;
      return startApi(stack, { entry, ...(flags.length > 0 ? { nodeFlags: flags } : {}) });
    };
    const a = await start(positionals[0]!);
    const b = await start(positionals[1]!);
    const clientA = await signIn(a.url, account, CLIENTS);
    const clientB = connect(b.url, CLIENTS, clientA.token);
    const properties = await seedApiWorkload(clientA, await refusingUrl());
    const builds: [string, ApiClient, number][] = [
      ['A', clientA, a.child.process.pid!],
      ['B', clientB, b.child.process.pid!],
    ];
    let seq = 0;
    const next = (route: string) => (): Parameters<ApiClient['send']> =>
      route === 'get'
        ? LIST_REQUEST
        : [
            'PATCH',
            `/api/properties/${properties[Math.floor(Math.random() * properties.length)]}`,
            { notes: `ab ${++seq}` },
          ];
    const phases = new Map<string, Phase[]>();
    for (let r = 1; r <= rounds; r++) {
      for (const route of routes) {
        for (const [name, client, pid] of builds) {
          const phase = await closedLoop(pid, client, CLIENTS, seconds, next(route));
          if (phase.errors > 0) throw new Error(`${name} ${route}: ${phase.errors} errors`);
          log(
            `round ${r} ${route} ${name}: ${phase.perSecond}/s, ${phase.cpuMsPerRequest} ms CPU per request`,
          );
          phases.set(`${route} ${name}`, [...(phases.get(`${route} ${name}`) ?? []), phase]);
        }
      }
    }
    const result: Record<string, unknown> = { a: positionals[0], b: positionals[1], rounds, seconds };
    for (const route of routes) {
      const figures = (name: string) => {
        const list = phases.get(`${route} ${name}`)!;
        return {
          perSecond: median(list.map((p) => p.perSecond)),
          cpuMs: median(list.map((p) => p.cpuMsPerRequest)),
          machineCpuMs: median(list.map((p) => p.machineCpuMsPerRequest)),
        };
      };
      const [fa, fb] = [figures('A'), figures('B')];
      result[route] = {
        A: fa,
        B: fb,
        rateBvsA: round(fb.perSecond / fa.perSecond, 2),
        cpuBvsA: round(fb.cpuMs / fa.cpuMs, 2),
        machineCpuBvsA: round(fb.machineCpuMs / fa.machineCpuMs, 2),
      };
    }
    console.log(JSON.stringify(result));
    await clientA.close();
    await clientB.close();
    // SIGTERM, so a profiled process writes its profile
    await Promise.all([a.child.stop(), b.child.stop()]);
  } finally {
    await stopAll();
    await cluster.close();
    await rm(dataDir, { recursive: true, force: true });
  }
}

main().then(
  () => process.exit(0),
  (error: unknown) => {
    console.error(error instanceof Error ? error.message : error);
    process.exit(1);
  },
);
