/**
 * The benchmark's webhook target: a bare node:http server in a process of its own, so answering
 * deliveries never competes with the dispatcher's or the bench's event loop. Every POST answers
 * 200 with an empty body as fast as it can. Listens on 127.0.0.1 only, on the port given as the
 * first argument (0: any free one), and prints `{"port":N,"ports":[N,…]}` once listening. A
 * second argument K makes it listen on K ports (the first as told, the rest any free ones): K
 * origins to the dispatcher, each with its own connections, limit and breaker, one set of counters.
 * A third argument P makes path P of every port an endpoint that never answers: a POST there is
 * read, counted (`hung`) and left hanging until the dispatcher gives up on it.
 *
 * Control requests (GET, so they can never be mistaken for deliveries):
 * - `GET /stats`: counters of the current round.
 * - `GET /reset?inspect=1`: starts a new round; with `inspect` every body is parsed and recorded.
 * - `GET /records`: the recorded deliveries of an inspecting round.
 *
 * Inspecting reads `entity.id` (the group), the `seq=N;` prefix of `entity.notes` (the order the
 * writer committed the changes in) and `entity.lastModified` from each body; a delivery whose seq
 * is below one already received for its entity is an order violation. A webhook id seen before is
 * a redelivery (allowed: delivery is at-least-once) and is counted as a duplicate instead.
 */
import { createServer } from 'node:http';

/** One inspected delivery: webhook id, receipt (epoch ms, fractional), entity id, seq, lastModified (epoch ms). */
export type DeliveryRecord = [
  webhookId: number,
  receivedAt: number,
  entityId: number,
  seq: number,
  lastModified: number,
];

export interface TargetStats {
  received: number;
  /** POSTs to the hanging path, never answered (not in `received`). */
  hung: number;
  duplicates: number;
  orderViolations: number;
  /** Epoch ms of the first and the latest delivery of the round. */
  firstAt: number | null;
  lastAt: number | null;
}

// high resolution wall clock: latencies of a few milliseconds need better than Date.now()
const wallClock = () => performance.timeOrigin + performance.now();

let inspect = false;
let stats: TargetStats;
let seen: Set<string>;
let lastSeq: Map<number, number>;
let records: DeliveryRecord[];

function reset(inspecting: boolean): void {
  inspect = inspecting;
  stats = { received: 0, hung: 0, duplicates: 0, orderViolations: 0, firstAt: null, lastAt: null };
  seen = new Set();
  lastSeq = new Map();
  records = [];
}
reset(false);

function inspectDelivery(webhookId: string, receivedAt: number, body: string): void {
  if (seen.has(webhookId)) {
    stats.duplicates++;
    return;
  }
  seen.add(webhookId);
  const entity = (JSON.parse(body) as { entity: { id: number; notes?: string; lastModified?: string } })
    .entity;
  const seq = Number(/^seq=(\d+);/.exec(entity.notes ?? '')?.[1] ?? NaN);
  const previous = lastSeq.get(entity.id);
  if (previous !== undefined && seq < previous) stats.orderViolations++;
  else lastSeq.set(entity.id, seq);
  const lastModified = entity.lastModified ? Date.parse(entity.lastModified) : NaN;
  records.push([Number(webhookId), receivedAt, entity.id, seq, lastModified]);
}

/** The path that never answers (third argument), if any. */
const hangPath = process.argv[4];

const handle: Parameters<typeof createServer>[1] = (request, response) => {
  if (request.method === 'POST' && hangPath !== undefined && request.url === hangPath) {
    stats.hung++;
    request.resume();
    return;
  }
  if (request.method === 'POST') {
    const receivedAt = wallClock();
    stats.received++;
    stats.firstAt ??= receivedAt;
    stats.lastAt = receivedAt;
    if (!inspect) {
      request.resume();
      request.once('end', () => response.writeHead(200, { 'content-length': '0' }).end());
      return;
    }
    const chunks: Buffer[] = [];
    request.on('data', (chunk: Buffer) => chunks.push(chunk));
    request.once('end', () => {
      try {
        inspectDelivery(String(request.headers['webhook-id']), receivedAt, Buffer.concat(chunks).toString());
      } catch {
        // a body the bench did not write: still answered 200, as the throughput counts it
      }
      response.writeHead(200, { 'content-length': '0' }).end();
    });
    return;
  }
  const url = new URL(request.url ?? '/', 'http://127.0.0.1');
  const json = (value: unknown) =>
    response.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify(value));
  if (url.pathname === '/stats') return json(stats);
  if (url.pathname === '/records') return json(records);
  if (url.pathname === '/reset') {
    reset(url.searchParams.get('inspect') === '1');
    return json(stats);
  }
  response.writeHead(404).end();
};

const listeners = Number(process.argv[3] ?? 1);
const servers = Array.from({ length: listeners }, () => {
  const server = createServer(handle);
  // the dispatcher keeps its connections open between batches; never close them under it
  server.keepAliveTimeout = 120_000;
  return server;
});
void Promise.all(
  servers.map(
    (server, index) =>
      new Promise<number>((listening) =>
        server.listen(index === 0 ? Number(process.argv[2] ?? 0) : 0, '127.0.0.1', () => {
          const address = server.address();
          listening(typeof address === 'object' && address ? address.port : 0);
        }),
      ),
  ),
).then((ports) => process.stdout.write(`${JSON.stringify({ port: ports[0], ports })}\n`));
// the bench holds our stdin open; when it dies without stopping us, so do we
process.stdin.resume();
process.stdin.once('close', () => process.exit(0));
process.on('SIGTERM', () => {
  for (const server of servers) server.closeAllConnections();
  void Promise.all(servers.map((server) => new Promise((closed) => server.close(closed)))).then(() =>
    process.exit(0),
  );
});
