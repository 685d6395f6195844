import { describe, expect, it } from 'vitest';
import { brokenPromises, runChaos } from './scenario';

// the shortened form of `pnpm test:chaos` that `pnpm test` runs: same scenario, fewer webhooks
describe('the chaos run, shortened', () => {
  it(
    'loses nothing, keeps every group in order, duplicates only what a kill or the outage had in flight, and recovers',
    { timeout: 240_000 },
    async () => {
      const seed = Math.floor(Math.random() * 2 ** 31);
      const report = await runChaos({
        entities: 40,
        changesPerEntity: 12,
        kills: 4,
        writeMs: 15_000,
        settleMs: 90_000,
        seed,
        log: () => {},
      });
      console.log(JSON.stringify(report));
      expect(report.webhooks).toBe(40 * 12 * 4);
      expect(brokenPromises(report, { kills: 4 }), `seed ${seed}`).toEqual([]);
      expect(report.successful + report.failed).toBe(report.webhooks);
    },
  );
});
