/**
 * One process of the split raw HTTP limit (`rawHttpSplit`, `raw-http.ts`): POSTs `count` bodies
 * of `bodyBytes` to `url`, `concurrency` at a time (`measureRawHttp`, after its warm-up), once
 * its parent writes a line to stdin, so that every process starts together. Prints `ready` when
 * warmed up and connected, then one JSON line with its figures.
 *
 *   tsx bench/raw-http-child.ts URL CONCURRENCY COUNT BODY_BYTES
 */
import { createInterface } from 'node:readline';
import { measureRawHttp, type RawRequest } from './raw-http';

const [url, concurrency, count, bodyBytes] = process.argv.slice(2);
const requests: RawRequest[] = Array.from({ length: Number(count) }, (_, index) => ({
  headers: { 'content-type': 'application/json', 'webhook-id': `split-${process.pid}-${index}` },
  body: JSON.stringify({ entity: { notes: 'x'.repeat(Math.max(0, Number(bodyBytes) - 24)) } }),
}));
const start = new Promise<void>((go) => createInterface({ input: process.stdin }).once('line', () => go()));
const result = await measureRawHttp(url!, requests, {
  concurrency: Number(concurrency),
  warmup: Math.min(1_000, Number(count)),
  beforeTimed: async () => {
    process.stdout.write('ready\n');
    await start;
  },
});
process.stdout.write(`${JSON.stringify(result)}\n`);
process.exit(0);
