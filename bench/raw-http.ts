import { spawnNode } from '@platform/testkit';
import { Agent, request } from 'undici';
import { machineBusyMs } from './processes';

/** One prepared request: what the dispatcher would send, built before the clock starts. */
export interface RawRequest {
  headers: Record<string, string>;
  body: string;
}

/**
 * The HTTP limit without a database: POSTs `requests` to `url` with undici, `concurrency` at a
 * time over a keep-alive pool of as many connections (the dispatcher's settings), reading each
 * answer to its end. A warm-up of `warmup` requests (connections, JIT) runs first, untimed.
 * Answers requests per second.
 */
export async function measureRawHttp(
  url: string,
  requests: readonly RawRequest[],
  options: {
    concurrency: number;
    warmup: number;
    /** Awaited between the warm-up and the timed requests. */
    beforeTimed?: () => Promise<void>;
  },
): Promise<{ count: number; seconds: number; perSecond: number }> {
  const agent = new Agent({ connections: options.concurrency, pipelining: 1, keepAliveTimeout: 30_000 });
  const target = new URL(url);
  const run = async (count: number) => {
    let next = 0;
    const worker = async () => {
      while (next < count) {
        const item = requests[next++ % requests.length]!;
        const response = await request(target, {
          method: 'POST',
          headers: item.headers,
          body: item.body,
          dispatcher: agent,
        });
        await response.body.dump();
        if (response.statusCode !== 200) throw new Error(`the target answered ${response.statusCode}`);
      }
    };
    await Promise.all(Array.from({ length: options.concurrency }, worker));
  };
  try {
    await run(options.warmup);
    await options.beforeTimed?.();
    const started = performance.now();
    await run(requests.length);
    const seconds = (performance.now() - started) / 1000;
    return { count: requests.length, seconds, perSecond: requests.length / seconds };
  } finally {
    await agent.close();
  }
}

/**
 * The raw HTTP limit split over `processes` processes (`raw-http-child.ts`), `concurrency` in
 * flight in all (split evenly), `count` requests in all of bodies of `bodyBytes`: every process
 * warms up, then all start at once. Answers the rate and the whole machine's CPU per request
 * (the target's included): beside one process's, what splitting the same work over more
 * processes costs this machine whatever the processes do (the replicas mode's limit).
 */
export async function rawHttpSplit(
  url: string,
  options: { processes: number; concurrency: number; count: number; bodyBytes: number },
): Promise<{ processes: number; perSecond: number; machineCpuMsPerRequest: number }> {
  const share = Math.ceil(options.count / options.processes);
  const inFlight = Math.max(1, Math.round(options.concurrency / options.processes));
  const children = Array.from({ length: options.processes }, (_, index) => {
    let output = '';
    let ready: () => void;
    const isReady = new Promise<void>((resolve) => (ready = resolve));
    const child = spawnNode('bench/raw-http-child.ts', {
      label: `raw HTTP ${index + 1} of ${options.processes}`,
      args: [url, String(inFlight), String(share), String(options.bodyBytes)],
      onOutput: (text, stream) => {
        if (stream !== 'stdout') return;
        output += text;
        if (output.includes('ready\n')) ready();
      },
    });
    return { child, isReady };
  });
  try {
    await Promise.all(
      children.map(async ({ child, isReady }) => {
        const first = await Promise.race([isReady.then(() => 'ready'), child.exited.then(() => 'exited')]);
        if (first === 'exited') throw new Error(child.tail());
      }),
    );
    const before = await machineBusyMs();
    const started = performance.now();
    for (const { child } of children) child.process.stdin!.write('go\n');
    const codes = await Promise.all(children.map(({ child }) => child.exited));
    const seconds = (performance.now() - started) / 1000;
    const busy = (await machineBusyMs()) - before;
    if (codes.some((code) => code !== 0))
      throw new Error(children.map(({ child }) => child.tail()).join('\n'));
    const total = share * options.processes;
    return {
      processes: options.processes,
      perSecond: Math.round(total / seconds),
      machineCpuMsPerRequest: Math.round((busy / total) * 1000) / 1000,
    };
  } finally {
    await Promise.all(children.map(({ child }) => child.stop()));
  }
}
