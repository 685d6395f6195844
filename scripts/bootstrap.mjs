#!/usr/bin/env node
// Makes `npm start` / `npm test` (and their pnpm twins) work on a fresh clone with only Node:
// when that Node is older than the pinned runtime (`nodeRuntime` in package.json), fetches the
// pinned one from the npm registry (scripts/node-runtime.mjs) and runs itself again under it, with
// it first on PATH so pnpm, tsx, vitest, Playwright and every child process use it; then finds
// pnpm (or fetches the pinned one through npx), installs the workspace when the lockfile changed
// since the last install, and runs the real script named on the command line. `exec <command>`
// runs a command of the workspace instead (`node scripts/bootstrap.mjs exec vitest run <file>`).
import { spawn, spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { delimiter, dirname, join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import { ensureNode, olderThan, pinnedRuntime } from './node-runtime.mjs';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const script = process.argv[2];
const extraArgs = process.argv.slice(3);
if (!script) {
  console.error('usage: node scripts/bootstrap.mjs <script> [args]');
  process.exit(2);
}

/** Runs `command` with the terminal, passes the stop signals on, and exits as it exits. */
function handOver(command, args, options) {
  const child = spawn(command, args, { cwd: root, stdio: 'inherit', ...options });
  for (const signal of ['SIGINT', 'SIGTERM', 'SIGHUP']) process.on(signal, () => child.kill(signal));
  child.on('exit', (code, signal) => process.exit(code ?? (signal ? 128 : 1)));
  // npm and pnpm exit on SIGTERM without passing it on: once orphaned, stop the child ourselves
  const launcher = process.ppid;
  setInterval(() => process.ppid !== launcher && child.kill('SIGTERM'), 500).unref();
}

const pin = pinnedRuntime(root);
if (olderThan(process.versions.node, pin.version)) {
  let node;
  try {
    node = ensureNode(root, pin);
  } catch (error) {
    console.error(`Node ${process.version} is older than the pinned ${pin.version}: ${error.message}`);
    process.exit(1);
  }
  const shown = relative(root, node);
  console.error(`Node ${process.version} is older than the pinned ${pin.version}: running under ${shown}`);
  const PATH = [dirname(node), process.env.PATH].filter(Boolean).join(delimiter);
  handOver(node, [fileURLToPath(import.meta.url), ...process.argv.slice(2)], {
    env: { ...process.env, PATH },
  });
} else {
  await main();
}

async function main() {
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
    const [cmd, ...rest] = [...pnpm, ...(script === 'exec' ? ['exec'] : ['run', script]), ...extraArgs];
    handOver(cmd, rest);
  }
}
