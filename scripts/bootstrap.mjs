#!/usr/bin/env node
// Makes `npm start` / `npm test` (and their pnpm twins) work on a fresh clone with only Node:
// finds pnpm (or fetches the pinned one through npx), installs the workspace when the lockfile
// changed since the last install, then runs the real script named on the command line.
import { spawn, spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const script = process.argv[2];
const extraArgs = process.argv.slice(3);
if (!script) {
  console.error('usage: node scripts/bootstrap.mjs <script> [args]');
  process.exit(2);
}

const { packageManager } = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8'));
const hasPnpm = spawnSync('pnpm', ['--version'], { stdio: 'ignore', shell: false }).status === 0;
const pnpm = hasPnpm ? ['pnpm'] : ['npx', '--yes', packageManager];

function run(args) {
  const [cmd, ...rest] = [...pnpm, ...args];
  const result = spawnSync(cmd, rest, { cwd: root, stdio: 'inherit' });
  if (result.status !== 0) process.exit(result.status ?? 1);
}

const lockfile = join(root, 'pnpm-lock.yaml');
const stamp = join(root, 'node_modules', '.install-stamp');
const wanted = createHash('sha256')
  .update(existsSync(lockfile) ? readFileSync(lockfile) : '')
  .update(process.version)
  .digest('hex');
if (!existsSync(stamp) || readFileSync(stamp, 'utf8') !== wanted) {
  run(['install', '--frozen-lockfile']);
  writeFileSync(stamp, wanted);
}
if (script === 'run-start') {
  // The stack's supervisor runs in this very process (tsx's loader registered in-process), so a
  // SIGTERM sent to `npm start`/`pnpm start` reaches it instead of orphaning the stack.
  const { register } = await import('tsx/esm/api');
  register();
  await import('./start.ts');
} else {
  const [cmd, ...rest] = [...pnpm, 'run', script, ...extraArgs];
  const child = spawn(cmd, rest, { cwd: root, stdio: 'inherit' });
  for (const signal of ['SIGINT', 'SIGTERM', 'SIGHUP']) process.on(signal, () => child.kill(signal));
  child.on('exit', (code, signal) => process.exit(code ?? (signal ? 128 : 1)));
}
