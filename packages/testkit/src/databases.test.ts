import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { claimDataDir } from './databases';

describe('claimDataDir (one embedded test cluster per concurrent test run)', () => {
  let root: string;
  let base: string;
  beforeEach(() => {
    root = mkdtempSync(join(tmpdir(), 'claim-data-dir-'));
    base = join(root, 'test-postgres');
  });
  afterEach(() => rmSync(root, { recursive: true, force: true }));

  it('gives a second live run the next folder, and the first back once released', () => {
    const first = claimDataDir(base);
    expect(first.dataDir).toBe(base);
    expect(readFileSync(`${base}.owner`, 'utf8')).toBe(String(process.pid));
    const second = claimDataDir(base);
    expect(second.dataDir).toBe(`${base}-2`);
    first.release();
    expect(existsSync(`${base}.owner`)).toBe(false);
    const third = claimDataDir(base);
    expect(third.dataDir).toBe(base);
    second.release();
    third.release();
  });

  it('takes over the folder of a run that died without releasing it', () => {
    // a pid far above any the kernel hands out (pid_max is at most 2^22)
    writeFileSync(`${base}.owner`, String(2 ** 30));
    const claim = claimDataDir(base);
    expect(claim.dataDir).toBe(base);
    expect(readFileSync(`${base}.owner`, 'utf8')).toBe(String(process.pid));
    claim.release();
  });
});
