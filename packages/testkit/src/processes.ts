import { spawn, type ChildProcess } from 'node:child_process';
import { resolve } from 'node:path';
import { eventually, type Watched } from './wait';

/** The repository's root: every process runs from it. */
export const ROOT = resolve(import.meta.dirname, '../../..');

/** A child process, with the tail of its output kept for error messages. */
export interface NodeProcess extends Watched {
  process: ChildProcess;
  /** Resolves with the exit code once the process has exited and its output is drained. */
  readonly exited: Promise<number | null>;
  /** Its last 40 lines (stdout and stderr), labelled, for an error message. */
  tail(): string;
  /** SIGTERM, then SIGKILL if it has not exited within `graceMs`; answers the exit code. */
  stop(graceMs?: number): Promise<number | null>;
}

const running = new Set<NodeProcess>();
let extraNodeArgs: string[] = [];

/** Node options every later child gets, such as `--cpu-prof` (`pnpm bench --profile DIR`). */
export function setChildNodeArgs(args: string[]): void {
  extraNodeArgs = args;
}

export interface SpawnOptions {
  args?: string[];
  /** On top of this process's environment; a variable given as undefined is left unset. */
  env?: Record<string, string | undefined>;
  /** Names the process in `tail()`. */
  label?: string;
  /** Node flags before the file, such as the heap bounds production runs with. */
  nodeFlags?: string[];
  /** Every chunk it writes, as it arrives. */
  onOutput?(chunk: string, stream: 'stdout' | 'stderr'): void;
}

/**
 * Runs a TypeScript file as `node --import tsx <file>` (a built `.mjs` by plain Node) from the
 * repository's root: one process, not the `tsx` CLI's two, so its pid is the one whose memory is
 * sampled and signals reach it directly. Its stdin stays open for its life, so a child that
 * watches stdin (the bench target) exits when the process that spawned it dies.
 */
export function spawnNode(file: string, options: SpawnOptions = {}): NodeProcess {
  const { args = [], label = file, nodeFlags = [], onOutput } = options;
  const loader = file.endsWith('.ts') ? ['--import', 'tsx'] : [];
  const env: Record<string, string | undefined> = { ...process.env, ...options.env };
  // spawn would hand an undefined value over as the string "undefined"
  for (const [name, value] of Object.entries(env)) if (value === undefined) delete env[name];
  const child = spawn(process.execPath, [...extraNodeArgs, ...nodeFlags, ...loader, file, ...args], {
    cwd: ROOT,
    env,
    stdio: ['pipe', 'pipe', 'pipe'],
  });
  const lines: string[] = [];
  const keep = (stream: 'stdout' | 'stderr') => (chunk: Buffer) => {
    const text = chunk.toString();
    lines.push(...text.split('\n').filter(Boolean));
    if (lines.length > 40) lines.splice(0, lines.length - 40);
    onOutput?.(text, stream);
  };
  child.stdout!.on('data', keep('stdout'));
  child.stderr!.on('data', keep('stderr'));
  // 'close' comes after stdout is drained, so the last lines are in by then
  const exited = new Promise<number | null>((done) => child.once('close', (code) => done(code)));
  const handle: NodeProcess = {
    process: child,
    exited,
    tail: () => `${label}:\n  ${lines.join('\n  ')}`,
    gone: () =>
      child.exitCode === null && child.signalCode === null
        ? undefined
        : `${label} exited (${child.exitCode ?? child.signalCode})\n${handle.tail()}`,
    stop: async (graceMs = 15_000) => {
      if (child.exitCode === null && child.signalCode === null) {
        child.kill('SIGTERM');
        const timer = setTimeout(() => child.kill('SIGKILL'), graceMs);
        await exited;
        clearTimeout(timer);
      }
      running.delete(handle);
      return exited;
    },
  };
  running.add(handle);
  void exited.then(() => running.delete(handle));
  return handle;
}

/** Stops every child still running (when a run is interrupted or fails). */
export async function stopAll(): Promise<void> {
  await Promise.all([...running].map((child) => child.stop(5_000)));
}

/** Resolves once `url` answers 200; fails early if `child` exits first. */
export async function waitForHealthy(url: string, child: NodeProcess, timeoutMs = 30_000): Promise<void> {
  await eventually(async () => (await fetch(url)).status === 200, {
    timeoutMs,
    what: `${url} answering 200`,
    watch: child,
  });
}
