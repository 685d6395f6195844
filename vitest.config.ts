import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: [
      'apps/*/src/**/*.test.ts',
      'apps/*/tests/**/*.test.ts',
      'packages/*/src/**/*.test.ts',
      'bench/*.test.ts',
      'chaos/*.test.ts',
      'scripts/*.test.ts',
    ],
    globalSetup: ['./vitest.global-setup.ts'],
    // every status the API tests observe is checked against OpenAPI (apps/api/tests/support/status-recorder.ts)
    setupFiles: ['./apps/api/tests/support/status-check.setup.ts'],
    pool: 'forks',
    testTimeout: 30_000,
    hookTimeout: 120_000,
  },
});
