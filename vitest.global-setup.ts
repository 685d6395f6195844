import type { TestProject } from 'vitest/node';
import { setupTestDatabases } from '@platform/testkit';

export default async function setup(project: TestProject) {
  try {
    return await setupTestDatabases(project);
  } catch (error) {
    // vitest 4 reports an error thrown here but then exits 0 ("no test files found"), which would
    // let `pnpm test` go on as if every test had passed: fail the run ourselves
    console.error('the test databases could not be set up:', error);
    process.exit(1);
  }
}
