import { execFileSync, spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { delimiter, join, resolve } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { ensureNode, olderThan, pinnedRuntime, runtimeDir, verifyIntegrity } from './node-runtime.mjs';

const ROOT = resolve(import.meta.dirname, '..');
const pin = pinnedRuntime(ROOT);
const temps: string[] = [];
const tempDir = () => {
  const dir = mkdtempSync(join(tmpdir(), 'node-runtime-test-'));
  temps.push(dir);
  return dir;
};
afterAll(() => temps.forEach((dir) => rmSync(dir, { recursive: true, force: true })));

/** A `node` on PATH older than the pinned one (the machine's Node 20 here), if there is one. */
function olderNode(): string | undefined {
  for (const dir of (process.env.PATH ?? '').split(delimiter)) {
    const candidate = join(dir, 'node');
    if (!existsSync(candidate)) continue;
    const version = spawnSync(candidate, ['--version'], { encoding: 'utf8' }).stdout?.trim();
    if (version && olderThan(version, pin.version)) return candidate;
  }
  return undefined;
}

describe('the pinned Node runtime', () => {
  it('is what engines asks for, and what this suite runs on', () => {
    const { engines } = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8'));
    expect(engines.node).toBe(`>=${pin.version}`);
    expect(olderThan(process.version, pin.version)).toBe(false);
  });

  it('compares versions by number', () => {
    expect(olderThan('v20.20.2', '24.21.0')).toBe(true);
    expect(olderThan('24.9.0', '24.21.0')).toBe(true);
    expect(olderThan('24.21.0', '24.21.0')).toBe(false);
    expect(olderThan('v26.0.0', '24.21.0')).toBe(false);
  });

  it('accepts a file only with the pinned integrity', () => {
    const file = join(tempDir(), 'package.tgz');
    writeFileSync(file, 'the tarball');
    const digest = createHash('sha512').update('the tarball').digest('base64');
    expect(() => verifyIntegrity(file, `sha512-${digest}`)).not.toThrow();
    writeFileSync(file, 'a tampered tarball');
    expect(() => verifyIntegrity(file, `sha512-${digest}`)).toThrow(/not the pinned sha512-/);
  });

  it('fetches it from the npm registry, checks it and caches it under .data/node', () => {
    const root = tempDir();
    const fetched: string[] = [];
    const node = ensureNode(root, pin, (line) => fetched.push(line));
    expect(node).toBe(join(runtimeDir(root, pin.version), 'bin', 'node'));
    expect(execFileSync(node, ['--version'], { encoding: 'utf8' }).trim()).toBe(`v${pin.version}`);
    expect(fetched).toHaveLength(1);
    // cached: the second call fetches nothing
    expect(ensureNode(root, pin, (line) => fetched.push(line))).toBe(node);
    expect(fetched).toHaveLength(1);
  }, 180_000);

  it('refuses a tarball that is not the pinned one and caches nothing', () => {
    const root = tempDir();
    const forged = { ...pin, integrity: `sha512-${createHash('sha512').update('other').digest('base64')}` };
    expect(() => ensureNode(root, forged, () => {})).toThrow(/refusing to run it/);
    expect(existsSync(runtimeDir(root, pin.version))).toBe(false);
  }, 180_000);

  it('names the way out on a platform it has no package for', () => {
    const elsewhere = { ...pin, package: 'node-plan9-mips' };
    expect(() => ensureNode(tempDir(), elsewhere, () => {})).toThrow(/install Node .* or newer yourself/);
  });

  it('runs bootstrap commands under it when the Node that starts them is older', (context) => {
    const old = olderNode();
    if (!old) return context.skip('no Node older than the pinned one on PATH');
    const out = execFileSync(old, ['scripts/bootstrap.mjs', 'exec', 'node', '-p', 'process.execPath'], {
      cwd: ROOT,
      encoding: 'utf8',
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    // `node` as any child finds it on PATH: the pinned binary in this checkout's cache
    expect(out.trim().split('\n').at(-1)).toBe(join(runtimeDir(ROOT, pin.version), 'bin', 'node'));
  }, 180_000);

  it('stops a test run started on an older Node with the way to run it', (context) => {
    const old = olderNode();
    if (!old) return context.skip('no Node older than the pinned one on PATH');
    const run = spawnSync(old, ['node_modules/vitest/vitest.mjs', 'run', 'packages/shared/src'], {
      cwd: ROOT,
      encoding: 'utf8',
      env: { ...process.env, CI: 'true' },
    });
    expect(run.status).toBe(1);
    expect(run.stderr + run.stdout).toContain('node scripts/bootstrap.mjs exec vitest run <files>');
  }, 120_000);
});
