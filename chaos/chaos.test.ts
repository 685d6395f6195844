import { describe, expect, it } from 'vitest';
import { brokenPromises, runChaos } from './scenario';

// the shortened form of `pnpm test:chaos` that `pnpm test` runs: same scenario, fewer webhooks;
// on one database's layout and on the Citus emulation's (the queue tables partitioned by bucket)
describe.each(['flat', 'buckets'] as const)('the chaos run, shortened, on the %s layout', (layout) => {
  it(
    'loses nothing, fails only what the target never accepts, keeps every group in order, duplicates only what a kill or the outage had in flight, and recovers',
    { timeout: 240_000 },
    async () => {
      const seed = Math.floor(Math.random() * 2 ** 31);
      const lines: string[] = [];
      // 40 entities × 12 changes × 4 registrations; two registrations grouped, a group per entity
      const expected = { kills: 4, webhooks: 40 * 12 * 4, groups: 40 * 2 };
      const report = await runChaos({
        entities: 40,
        changesPerEntity: 12,
        kills: expected.kills,
        writeMs: 15_000,
        settleMs: 90_000,
        seed,
        layout,
        log: (line) => lines.push(line),
      });
      console.log(JSON.stringify(report));
      const broken = brokenPromises(report, expected);
      // on failure, the run's own lines say which webhooks broke which promise
      if (broken.length > 0) console.log(lines.join('\n'));
      expect(report.webhooks).toBe(expected.webhooks);
      expect(report.groups).toBe(expected.groups);
      expect(broken, `seed ${seed}\n${report.details.join('\n')}`).toEqual([]);
      expect(report.successful + report.failed).toBe(report.webhooks);
      expect(report.failed).toBe(report.expectedFailed);
      // on the emulation, the four tenants' webhooks in four partitions of their own
      expect(report.webhookTables).toBe(layout === 'buckets' ? 4 : 1);
    },
  );
});
