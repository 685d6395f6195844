import { spawn, type ChildProcess } from 'node:child_process';
import { readFile } from 'node:fs/promises';
import { createServer } from 'node:net';
import { resolve } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import type { TargetStats } from './target';

export const ROOT = resolve(import.meta.dirname, '..');

/** A free TCP port on 127.0.0.1. */
export function freePort(): Promise<number> {
  return new Promise((done, fail) => {
    const server = createServer();
    server.once('error', fail);
    server.listen(0, '127.0.0.1', () => {
      const address = server.address();
      server.close(() => done(typeof address === 'object' && address ? address.port : 0));
    });
  });
}

/** A child process of the bench, with the tail of its output kept for error messages. */
export interface Child {
  process: ChildProcess;
  /** Resolves with the exit code once the process has exited. */
  exited: Promise<number | null>;
  /** Last lines it printed (stdout and stderr). */
  tail(): string;
  /** SIGTERM, then SIGKILL after `graceMs`. */
  stop(graceMs?: number): Promise<void>;
}

const running = new Set<Child>();
let extraNodeArgs: string[] = [];

/** Node options every later child gets, such as `--cpu-prof` (`pnpm bench --profile DIR`). */
export function setChildNodeArgs(args: string[]): void {
  extraNodeArgs = args;
}

/**
 * Runs a TypeScript entry point as `node --import tsx <file>`: one process (the `tsx` CLI would
 * put a second node process above it), so its pid is the one whose memory is sampled.
 */
export function spawnTs(
  file: string,
  args: string[],
  env: Record<string, string>,
  label: string,
  nodeFlags: string[] = [],
): Child {
  // TypeScript through tsx; a built bundle (.mjs) by plain Node
  const loader = file.endsWith('.ts') ? ['--import', 'tsx'] : [];
  const child = spawn(process.execPath, [...extraNodeArgs, ...nodeFlags, ...loader, file, ...args], {
    cwd: ROOT,
    env: { ...process.env, ...env },
    // stdin stays open for the child's life: the target exits when it closes (the bench died)
    stdio: ['pipe', 'pipe', 'pipe'],
  });
  const lines: string[] = [];
  const keep = (chunk: Buffer) => {
    lines.push(...chunk.toString().split('\n').filter(Boolean));
    if (lines.length > 40) lines.splice(0, lines.length - 40);
  };
  child.stdout!.on('data', keep);
  child.stderr!.on('data', keep);
  const exited = new Promise<number | null>((done) => child.once('exit', (code) => done(code)));
  const handle: Child = {
    process: child,
    exited,
    tail: () => `${label}:\n  ${lines.join('\n  ')}`,
    stop: async (graceMs = 15_000) => {
      if (child.exitCode === null && child.signalCode === null) {
        child.kill('SIGTERM');
        const timer = setTimeout(() => child.kill('SIGKILL'), graceMs);
        await exited;
        clearTimeout(timer);
      }
      running.delete(handle);
    },
  };
  running.add(handle);
  return handle;
}

/** Stops every child still running (used when the bench is interrupted or fails). */
export async function stopAll(): Promise<void> {
  await Promise.all([...running].map((child) => child.stop(5_000)));
}

/** Polls `check` until it is true; throws after `timeoutMs` with `what` and the child's output. */
export async function waitFor(
  check: () => Promise<boolean>,
  timeoutMs: number,
  what: string,
  child?: Child,
): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    if (await check().catch(() => false)) return;
    if (child && child.process.exitCode !== null) throw new Error(`${what}: process exited\n${child.tail()}`);
    if (Date.now() > deadline)
      throw new Error(`${what}: not within ${timeoutMs} ms${child ? `\n${child.tail()}` : ''}`);
    await sleep(20);
  }
}

/** The webhook target (bench/target.ts) in its own process, and its control requests. */
export interface Target {
  url: string;
  child: Child;
  reset(inspect: boolean): Promise<void>;
  stats(): Promise<TargetStats>;
  records<T>(): Promise<T>;
}

/** Starts bench/target.ts on a free 127.0.0.1 port. */
export async function startTarget(): Promise<Target> {
  const child = spawnTs('bench/target.ts', ['0'], {}, 'target');
  const port = await new Promise<number>((done, fail) => {
    child.process.stdout!.once('data', (chunk: Buffer) => done(JSON.parse(chunk.toString()).port));
    child.exited.then(() => fail(new Error(`the target exited\n${child.tail()}`)));
  });
  const base = `http://127.0.0.1:${port}`;
  const get = async (path: string) => (await fetch(`${base}${path}`)).json();
  return {
    url: `${base}/hook`,
    child,
    reset: async (inspect) => void (await get(`/reset${inspect ? '?inspect=1' : ''}`)),
    stats: () => get('/stats') as Promise<TargetStats>,
    records: <T>() => get('/records') as Promise<T>,
  };
}

/**
 * Samples a process's resident memory (VmRSS of /proc/<pid>/status) every `everyMs` and keeps the
 * maximum; `stop()` answers it in MB.
 */
export function sampleRss(pid: number, everyMs = 100): { stop(): number } {
  let maxKb = 0;
  const sample = async () => {
    try {
      const status = await readFile(`/proc/${pid}/status`, 'utf8');
      const kb = Number(/^VmRSS:\s+(\d+)\s+kB/m.exec(status)?.[1] ?? 0);
      if (kb > maxKb) maxKb = kb;
    } catch {
      // the process has exited: the maximum so far stands
    }
  };
  void sample();
  const timer = setInterval(() => void sample(), everyMs);
  return {
    stop: () => {
      clearInterval(timer);
      return Math.round(maxKb / 1024);
    },
  };
}
