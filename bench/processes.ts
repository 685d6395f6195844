import { readFile } from 'node:fs/promises';
import { spawnNode, type NodeProcess } from '@platform/testkit';
import type { TargetStats } from './target';

/** The webhook target (bench/target.ts) in its own process, and its control requests. */
export interface Target {
  url: string;
  /** One URL per listener (`startTarget(listeners)`), `url` first: each an origin of its own. */
  urls: string[];
  child: NodeProcess;
  reset(inspect: boolean): Promise<void>;
  stats(): Promise<TargetStats>;
  records<T>(): Promise<T>;
}

/**
 * Starts bench/target.ts on `listeners` free 127.0.0.1 ports (one unless told); POSTs to
 * `hangPath`, if given, are never answered.
 */
export async function startTarget(listeners = 1, hangPath?: string): Promise<Target> {
  const args = ['0', String(listeners), ...(hangPath === undefined ? [] : [hangPath])];
  const child = spawnNode('bench/target.ts', { args, label: 'target' });
  const ports = await new Promise<number[]>((done, fail) => {
    child.process.stdout!.once('data', (chunk: Buffer) => done(JSON.parse(chunk.toString()).ports));
    child.exited.then(() => fail(new Error(`the target exited\n${child.tail()}`)));
  });
  const base = `http://127.0.0.1:${ports[0]}`;
  const get = async (path: string) => (await fetch(`${base}${path}`)).json();
  return {
    url: `${base}/hook`,
    urls: ports.map((port) => `http://127.0.0.1:${port}/hook`),
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

/** Clock ticks per second of /proc's CPU times (USER_HZ: 100 on every Linux Node runs on here). */
const TICKS_PER_SECOND = 100;

/** CPU milliseconds (user + system) a process has used so far, from /proc/<pid>/stat. */
export async function processCpuMs(pid: number): Promise<number> {
  const stat = await readFile(`/proc/${pid}/stat`, 'utf8');
  // fields after the command name, which is in parentheses and may hold spaces
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  return ((Number(fields[11]) + Number(fields[12])) * 1000) / TICKS_PER_SECOND;
}

/** CPU milliseconds all cores of the machine have spent busy (not idle or waiting) so far, from /proc/stat. */
export async function machineBusyMs(): Promise<number> {
  const line = (await readFile('/proc/stat', 'utf8')).split('\n')[0]!;
  const [, ...ticks] = line.trim().split(/\s+/).map(Number);
  // user nice system idle iowait irq softirq steal …
  const busy = ticks.slice(0, 8).reduce((sum, t, i) => (i === 3 || i === 4 ? sum : sum + t), 0);
  return (busy * 1000) / TICKS_PER_SECOND;
}
