import type { TestProject } from 'vitest/node';
import { setupTestDatabases } from '@platform/testkit';
import { olderThan, pinnedRuntime } from './scripts/node-runtime.mjs';

export default async function setup(project: TestProject) {
  // undici 8 and vitest 5 do not load on older Node: say so rather than fail in a hundred places
  const pin = pinnedRuntime(import.meta.dirname);
  if (olderThan(process.version, pin.version)) {
    console.error(
      `The tests run on the pinned Node ${pin.version}, not ${process.version}: run them as ` +
        '`node scripts/bootstrap.mjs exec vitest run <files>` (it fetches that Node into .data/node), ' +
        `or put .data/node/${pin.version}/bin first on PATH (README, "Runtime").`,
    );
    process.exit(1);
  }
  try {
    return await setupTestDatabases(project);
  } catch (error) {
    // vitest 4 reports an error thrown here but then exits 0 ("no test files found"), which would
    // let `pnpm test` go on as if every test had passed: fail the run ourselves
    console.error('the test databases could not be set up:', error);
    process.exit(1);
  }
}
