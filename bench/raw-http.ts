import { Agent, request } from 'undici';

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
  options: { concurrency: number; warmup: number },
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
    const started = performance.now();
    await run(requests.length);
    const seconds = (performance.now() - started) / 1000;
    return { count: requests.length, seconds, perSecond: requests.length / seconds };
  } finally {
    await agent.close();
  }
}
