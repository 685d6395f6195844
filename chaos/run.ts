/**
 * `pnpm test:chaos`: the full chaos run (10,000 webhooks over 200 groups and ungrouped
 * ones, two dispatchers SIGKILLed at least 10 times, one Postgres restart, flaky, hanging and
 * resetting targets). Prints the figures as one JSON line (stdout) and readable lines (stderr);
 * exits 1 when a promise of docs/reliability.md broke. `--seed N` repeats a run; `--layout buckets`
 * runs it on the Citus emulation's layout (the queue tables partitioned by tenant bucket).
 */
import { parseArgs } from 'node:util';
import { brokenPromises, runChaos } from './scenario';

const { values } = parseArgs({ options: { seed: { type: 'string' }, layout: { type: 'string' } } });
if (values.layout !== undefined && values.layout !== 'flat' && values.layout !== 'buckets') {
  throw new Error(`--layout must be flat or buckets, not ${values.layout}`);
}
const seed = values.seed === undefined ? Math.floor(Math.random() * 2 ** 31) : Number(values.seed);
const log = (message: string) => process.stderr.write(`[chaos] ${message}\n`);
// 100 entities × 25 changes × 4 registrations; two registrations grouped, a group per entity
const expected = { kills: 12, webhooks: 10_000, groups: 200 };

const report = await runChaos({
  entities: 100,
  changesPerEntity: 25,
  kills: expected.kills,
  writeMs: 40_000,
  settleMs: 120_000,
  seed,
  layout: values.layout,
  log,
});
console.log(JSON.stringify(report));
const broken = brokenPromises(report, expected);
for (const line of broken) log(`BROKEN: ${line}`);
log(broken.length === 0 ? 'every promise held' : `${broken.length} promises broke`);
process.exit(broken.length === 0 ? 0 : 1);
