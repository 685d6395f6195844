import type { LookupAddress } from 'node:dns';
import { readFileSync } from 'node:fs';
import {
  createServer as createHttpsServer,
  request as httpsRequest,
  type Server as HttpsServer,
} from 'node:https';
import {
  createServer as createTcpServer,
  isIP,
  type AddressInfo,
  type LookupFunction,
  type Socket,
} from 'node:net';
import {
  attemptsOf,
  createTestDatabase,
  eventually,
  propertyChange,
  seedChange,
  seedParty,
  seedRegistration,
  startDispatcher,
  startTestTarget,
  type TargetAnswer,
  type TestDatabase,
  type TestTarget,
  waitForWebhook,
  webhookRow,
} from '@platform/testkit';
import { WebhookState } from '@platform/shared';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  Deliverer,
  RESPONSE_EXCERPT_BYTES,
  type DeliveryOutcome,
  type DeliveryRequest,
} from '@platform/delivery';

// Hostile targets: each hostile answer fails its attempt cleanly, within the timeout,
// with memory bounded and no effect on other deliveries. Every target is a real server on
// 127.0.0.1; names are resolved by a resolver handed to the Deliverer (its `lookup` option), so
// the private-address check under test is the one production runs, on the addresses we choose.

const TIMEOUT_MS = 2_000;
/** Timers, rounding and a loaded 2-core machine. */
const SLACK_MS = 1_500;
const MB = 1024 * 1024;
const HUGE_BODY_BYTES = 100 * MB;
/** Deliveries to a healthy target that run beside each hostile one. */
const HEALTHY_COUNT = 50;

const closers: (() => Promise<void> | void)[] = [];
afterAll(async () => {
  for (const close of closers.reverse()) await close();
});

/** A target of its own, closed after the file. */
async function target(script?: Parameters<typeof startTestTarget>[0]): Promise<TestTarget> {
  const started = await startTestTarget(script);
  closers.push(() => started.close());
  return started;
}

/** A Deliverer closed after the file. */
function deliverer(options: { allowPrivateTargets: boolean; lookup?: LookupFunction }): Deliverer {
  const created = new Deliverer({ timeoutMs: TIMEOUT_MS, connectionsPerOrigin: 8, ...options });
  closers.push(() => created.close());
  return created;
}

const delivery = (url: string, id = String(Math.random())): DeliveryRequest => ({
  url,
  headers: { 'content-type': 'application/json', 'webhook-id': id },
  body: JSON.stringify({ id }),
});

/** What a huge-body target has sent so far, and whether the dispatcher hung up on it. */
interface StreamStats {
  sent: number;
  closed: boolean;
}

/**
 * An answer of `status` announcing a 100 MB body and streaming it in 64 KiB chunks, respecting
 * backpressure (so the target never holds more than a chunk itself); it stops when the client
 * closes the connection.
 */
function hugeBody(status: number, stats: StreamStats): TargetAnswer {
  const chunk = Buffer.alloc(64 * 1024, 'x');
  return {
    handle: (response) => {
      response.on('close', () => (stats.closed = true));
      response.writeHead(status, { 'content-type': 'text/plain', 'content-length': String(HUGE_BODY_BYTES) });
      const pump = () => {
        while (stats.sent < HUGE_BODY_BYTES && !response.destroyed) {
          stats.sent += chunk.length;
          if (!response.write(chunk)) return void response.once('drain', pump);
        }
        if (!response.destroyed) response.end();
      };
      pump();
    },
  };
}

/** A 200 with its headers, then one byte of body a second, for ever. */
const trickleBody: TargetAnswer = {
  handle: (response) => {
    response.writeHead(200, { 'content-type': 'text/plain' });
    response.flushHeaders();
    const timer = setInterval(() => response.write('.'), 1_000);
    response.on('close', () => clearInterval(timer));
  },
};

/** A raw TCP server on 127.0.0.1 that hands each connection to `onSocket`; counts connections. */
async function rawTarget(
  onSocket: (socket: Socket) => void,
): Promise<{ url: string; connections: () => number }> {
  const sockets = new Set<Socket>();
  let connections = 0;
  const server = createTcpServer((socket) => {
    connections++;
    sockets.add(socket);
    socket.on('close', () => sockets.delete(socket));
    socket.on('error', () => {});
    onSocket(socket);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  closers.push(async () => {
    for (const socket of sockets) socket.destroy();
    await new Promise((resolve) => server.close(resolve));
  });
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/hook`,
    connections: () => connections,
  };
}

/**
 * A resolver (a `dns.lookup`) answering `names` with the given addresses, in order, and ENOTFOUND
 * for any other name; `asked` lists the names it was asked for.
 */
function fakeResolver(names: Record<string, string[]>): { lookup: LookupFunction; asked: string[] } {
  const asked: string[] = [];
  const lookup: LookupFunction = (hostname, options, callback) => {
    asked.push(hostname);
    setImmediate(() => {
      const addresses = names[hostname];
      if (!addresses) {
        const error = Object.assign(new Error(`getaddrinfo ENOTFOUND ${hostname}`), { code: 'ENOTFOUND' });
        return callback(error, '');
      }
      const list: LookupAddress[] = addresses.map((address) => ({ address, family: isIP(address) }));
      if (options.all) return callback(null, list);
      callback(null, list[0]!.address, list[0]!.family);
    });
  };
  return { lookup, asked };
}

let healthy: TestTarget;
beforeAll(async () => {
  healthy = await target(() => ({ status: 200, body: 'ok' }));
});

/**
 * Delivers `hostile` and, once `inFlight` holds (the hostile target has it), HEALTHY_COUNT
 * deliveries to the healthy target through the same Deliverer. Asserts every healthy one
 * succeeded and reached the target; answers the hostile outcome, when it ended and when the last
 * healthy one did (ms since the hostile one started).
 */
async function besideHealthyTraffic(
  through: Deliverer,
  hostile: DeliveryRequest,
  inFlight: () => boolean = () => true,
): Promise<{ outcome: DeliveryOutcome; hostileDoneMs: number; healthyDoneMs: number }> {
  const started = performance.now();
  const hostileRun = through
    .deliver(hostile)
    .then((outcome) => ({ outcome, at: performance.now() - started }));
  await eventually(inFlight, { timeoutMs: TIMEOUT_MS, what: 'the hostile delivery in flight' });
  const ids = Array.from({ length: HEALTHY_COUNT }, () => `healthy-${Math.random()}`);
  const healthyRuns = await Promise.all(
    ids.map((id) =>
      through
        .deliver(delivery(healthy.url, id))
        .then((outcome) => ({ outcome, at: performance.now() - started })),
    ),
  );
  const { outcome, at } = await hostileRun;
  expect(healthyRuns.map((run) => run.outcome.errorKind)).toEqual(ids.map(() => null));
  for (const id of ids) expect(healthy.requestsFor(id)).toHaveLength(1);
  return { outcome, hostileDoneMs: at, healthyDoneMs: Math.max(...healthyRuns.map((run) => run.at)) };
}

/** Samples this process's memory every few ms; `stop` answers the peak growth in MB. */
function trackMemory(): { stop(): { rssMb: number; arrayBuffersMb: number } } {
  const base = process.memoryUsage();
  let rss = base.rss;
  let arrayBuffers = base.arrayBuffers;
  const sample = () => {
    const now = process.memoryUsage();
    rss = Math.max(rss, now.rss);
    arrayBuffers = Math.max(arrayBuffers, now.arrayBuffers);
  };
  const timer = setInterval(sample, 5);
  return {
    stop: () => {
      clearInterval(timer);
      sample();
      return { rssMb: (rss - base.rss) / MB, arrayBuffersMb: (arrayBuffers - base.arrayBuffers) / MB };
    },
  };
}

describe('a hostile answer fails the attempt cleanly, beside 50 healthy deliveries', () => {
  let through: Deliverer;
  beforeAll(() => {
    // the targets live on 127.0.0.1; private addresses are refused in the describe below
    through = deliverer({ allowPrivateTargets: true });
  });

  it('a 200 with a 100 MB body: the 4 KiB excerpt, long before the timeout, without reading the rest', async () => {
    const stats: StreamStats = { sent: 0, closed: false };
    const huge = await target(() => hugeBody(200, stats));
    const memory = trackMemory();
    const run = await besideHealthyTraffic(through, delivery(huge.url), () => huge.requests.length > 0);
    const growth = memory.stop();
    await eventually(() => stats.closed, {
      timeoutMs: TIMEOUT_MS,
      what: 'the dispatcher closing the connection',
    });
    console.info(
      `100 MB body: failed in ${run.outcome.durationMs} ms, target sent ${(stats.sent / MB).toFixed(1)} MB, ` +
        `peak growth rss ${growth.rssMb.toFixed(1)} MB, arrayBuffers ${growth.arrayBuffersMb.toFixed(1)} MB`,
    );
    expect(run.outcome).toMatchObject({
      statusCode: 200,
      errorKind: null,
      responseBody: 'x'.repeat(RESPONSE_EXCERPT_BYTES),
    });
    expect(run.outcome.durationMs).toBeLessThan(TIMEOUT_MS / 2);
    // what the socket buffers took before the target saw the connection close; the rest never left
    expect(stats.sent).toBeLessThan(20 * MB);
    expect(growth.rssMb).toBeLessThan(40);
    expect(growth.arrayBuffersMb).toBeLessThan(40);
  });

  it('a body trickling one byte a second: timeout, within the timeout, while the healthy ones finish', async () => {
    const trickle = await target(() => trickleBody);
    const run = await besideHealthyTraffic(through, delivery(trickle.url), () => trickle.requests.length > 0);
    console.info(
      `trickled body: timeout after ${run.outcome.durationMs} ms; ` +
        `the ${HEALTHY_COUNT} healthy deliveries were done ${Math.round(run.healthyDoneMs)} ms after it started`,
    );
    expect(run.outcome).toMatchObject({ statusCode: null, errorKind: 'timeout', responseBody: null });
    expect(run.outcome.durationMs).toBeGreaterThanOrEqual(TIMEOUT_MS - 5);
    expect(run.outcome.durationMs).toBeLessThan(TIMEOUT_MS + SLACK_MS);
    expect(run.healthyDoneMs).toBeLessThan(run.hostileDoneMs);
  });

  it('a status line and headers trickling one byte a second: timeout, within the timeout', async () => {
    const head = 'HTTP/1.1 200 OK\r\n';
    const trickle = await rawTarget((socket) => {
      // the status line, then one endless header name
      let sent = 0;
      const writeNext = () => socket.write(sent < head.length ? head[sent++]! : 'X');
      writeNext();
      const timer = setInterval(writeNext, 1_000);
      socket.on('close', () => clearInterval(timer));
    });
    const run = await besideHealthyTraffic(through, delivery(trickle.url), () => trickle.connections() > 0);
    expect(run.outcome).toMatchObject({ statusCode: null, errorKind: 'timeout' });
    expect(run.outcome.durationMs).toBeGreaterThanOrEqual(TIMEOUT_MS - 5);
    expect(run.outcome.durationMs).toBeLessThan(TIMEOUT_MS + SLACK_MS);
    expect(run.healthyDoneMs).toBeLessThan(run.hostileDoneMs);
  });

  it('a redirect to a private address or the metadata service: redirect, and the Location is never requested', async () => {
    const inside = await target();
    const resolver = fakeResolver({ 'metadata.evil.test': ['127.0.0.1'] });
    const following = deliverer({ allowPrivateTargets: true, lookup: resolver.lookup });
    const insidePort = new URL(inside.origin).port;
    for (const [status, location] of [
      [302, `${inside.origin}/`],
      [307, 'http://169.254.169.254/latest/meta-data'],
      [301, `http://metadata.evil.test:${insidePort}/latest/meta-data`],
      [308, `http://[::ffff:127.0.0.1]:${insidePort}/`],
    ] as const) {
      const redirecting = await target(() => ({ status, headers: { location } }));
      const run = await besideHealthyTraffic(following, delivery(redirecting.url));
      expect(run.outcome, location).toMatchObject({ statusCode: status, errorKind: 'redirect' });
      // a request to 169.254.169.254 from here could only time out
      expect(run.outcome.durationMs, location).toBeLessThan(TIMEOUT_MS / 2);
    }
    expect(inside.connections).toBe(0);
    expect(resolver.asked).not.toContain('metadata.evil.test');
  });

  it('https:// to a plain-HTTP port: tls, within the timeout', async () => {
    const plain = await target();
    const run = await besideHealthyTraffic(through, delivery(plain.url.replace('http:', 'https:')));
    expect(run.outcome).toMatchObject({ statusCode: null, errorKind: 'tls', responseBody: null });
    expect(run.outcome.durationMs).toBeLessThan(TIMEOUT_MS);
    expect(plain.requests).toHaveLength(0);
  });

  it('a TLS server with a self-signed certificate: tls, within the timeout, and no request sent', async () => {
    // committed, for localhost and 127.0.0.1, valid 2000 to 2100 (`test-fixtures/make-self-signed.sh`)
    const fixture = (name: string) => readFileSync(new URL(`../test-fixtures/${name}`, import.meta.url));
    const cert = fixture('self-signed-cert.pem');
    let requests = 0;
    const server: HttpsServer = createHttpsServer(
      { key: fixture('self-signed-key.pem'), cert },
      (_request, response) => {
        requests++;
        response.end('ok');
      },
    );
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    closers.push(() => new Promise((resolve) => server.close(() => resolve())));
    const { port } = server.address() as AddressInfo;
    for (const host of ['127.0.0.1', 'localhost']) {
      const run = await besideHealthyTraffic(through, delivery(`https://${host}:${port}/hook`));
      expect(run.outcome, host).toMatchObject({ statusCode: null, errorKind: 'tls', responseBody: null });
      expect(run.outcome.durationMs, host).toBeLessThan(TIMEOUT_MS);
    }
    expect(requests).toBe(0);

    // a client that trusts the certificate gets through by both names, so what failed above is the
    // trust, not a certificate that expired or does not name the host
    for (const host of ['127.0.0.1', 'localhost']) {
      const status = await new Promise<number | undefined>((resolve, reject) =>
        httpsRequest({ host, port, path: '/hook', method: 'POST', ca: cert }, (response) => {
          response.resume();
          resolve(response.statusCode);
        })
          .on('error', reject)
          .end(),
      );
      expect(status, host).toBe(200);
    }
    expect(requests).toBe(2);
  });
});

describe('names resolving to private addresses, with private targets disallowed', () => {
  const resolver = fakeResolver({
    'loopback.evil.test': ['127.0.0.1'],
    'metadata.evil.test': ['169.254.169.254'],
    'loopback6.evil.test': ['::1'],
    'mapped.evil.test': ['::ffff:127.0.0.1'],
    // a public (documentation, never routed) address first, the private one second
    'mixed.evil.test': ['203.0.113.10', '127.0.0.1'],
  });
  let inside: TestTarget;
  let strict: Deliverer;
  beforeAll(async () => {
    inside = await target();
    strict = deliverer({ allowPrivateTargets: false, lookup: resolver.lookup });
  });

  it('the resolver is the one connections use: with private targets allowed the name reaches the target', async () => {
    const permissive = deliverer({ allowPrivateTargets: true, lookup: resolver.lookup });
    const outcome = await permissive.deliver(
      delivery(`http://loopback.evil.test:${new URL(inside.origin).port}/hook`),
    );
    expect(outcome).toMatchObject({ statusCode: 200, errorKind: null });
    expect(inside.requests).toHaveLength(1);
  });

  it('refuses each with private-address at connect time, before any connection', async () => {
    const before = inside.connections;
    const port = new URL(inside.origin).port;
    for (const name of [
      'loopback.evil.test',
      'metadata.evil.test',
      'loopback6.evil.test',
      'mapped.evil.test',
      'mixed.evil.test',
    ]) {
      // no healthy traffic beside these: a Deliverer refusing private targets cannot reach any
      // local server, and a refusal before connecting holds nothing another delivery could wait for
      const outcome = await strict.deliver(delivery(`http://${name}:${port}/hook`));
      expect(outcome, name).toMatchObject({
        statusCode: null,
        errorKind: 'private-address',
        responseBody: null,
      });
      expect(outcome.durationMs, name).toBeLessThan(TIMEOUT_MS);
      expect(resolver.asked, name).toContain(name);
    }
    expect(inside.connections).toBe(before);
  });
});

describe('through the real dispatcher process', () => {
  let db: TestDatabase;
  beforeAll(async () => {
    db = await createTestDatabase();
    closers.push(() => db.drop());
  });

  /** A party of its own with one registration at `targetUrl`; answers the party's id. */
  async function registered(targetUrl: string): Promise<number> {
    const partyId = await seedParty(db.knex, 'Hostile');
    await seedRegistration(db.knex, { partyId, targetUrl });
    return partyId;
  }

  /** `process_resident_memory_bytes` of the dispatcher, in MB. */
  async function dispatcherRssMb(port: number): Promise<number> {
    const metrics = await (await fetch(`http://127.0.0.1:${port}/metrics`)).text();
    return Number(/^process_resident_memory_bytes (\S+)$/m.exec(metrics)![1]) / MB;
  }

  it('records the hostile attempts with their error kind while the healthy webhooks succeed', async () => {
    const stats: StreamStats = { sent: 0, closed: false };
    const huge = await target(() => hugeBody(500, stats));
    const trickle = await target(() => trickleBody);
    const hugeParty = await registered(huge.url);
    const trickleParty = await registered(trickle.url);
    const healthyParty = await registered(healthy.url);
    // one attempt each, so a failure is final; targets live on 127.0.0.1, which startDispatcher allows
    const dispatcher = await startDispatcher(db.url, {
      WEBHOOK_TIMEOUT: `${TIMEOUT_MS}ms`,
      WEBHOOK_RETRY_SCHEDULE: '0ms',
      DISPATCHER_POLL_INTERVAL: '60s',
      LOG_LEVEL: 'info',
    });
    closers.push(() => void dispatcher.stop());
    const rssBefore = await dispatcherRssMb(dispatcher.port);

    const [hugeId] = await seedChange(db.knex, propertyChange(hugeParty, 1));
    const [trickleId] = await seedChange(db.knex, propertyChange(trickleParty, 2));
    await eventually(() => trickle.requests.length > 0, { what: 'the trickle target receiving its webhook' });
    const healthyIds: number[] = [];
    for (let i = 0; i < 20; i++)
      healthyIds.push(...(await seedChange(db.knex, propertyChange(healthyParty, 100 + i))));

    await waitForWebhook(db.knex, trickleId!, WebhookState.Failed, { attempts: 1 });
    const [trickleAttempt] = await attemptsOf(db.knex, trickleId!);
    expect(trickleAttempt).toMatchObject({ status_code: null, error_kind: 'timeout', response_body: null });
    expect(trickleAttempt!.duration_ms).toBeGreaterThanOrEqual(TIMEOUT_MS - 5);
    expect(trickleAttempt!.duration_ms).toBeLessThan(TIMEOUT_MS + SLACK_MS);

    // the healthy webhooks were done while the trickle attempt was still running
    const trickleEnded = trickleAttempt!.started_at.getTime() + trickleAttempt!.duration_ms;
    for (const id of healthyIds) {
      const row = await webhookRow(db.knex, id);
      expect(row.state, `healthy webhook ${id}`).toBe(WebhookState.Successful);
      expect(row.completed_at!.getTime(), `healthy webhook ${id}`).toBeLessThan(trickleEnded);
    }

    await waitForWebhook(db.knex, hugeId!, WebhookState.Failed, { attempts: 1 });
    const [hugeAttempt] = await attemptsOf(db.knex, hugeId!);
    expect(hugeAttempt).toMatchObject({
      status_code: 500,
      error_kind: 'status',
      response_body: 'x'.repeat(RESPONSE_EXCERPT_BYTES),
    });
    expect(hugeAttempt!.duration_ms).toBeLessThan(TIMEOUT_MS / 2);
    await eventually(() => stats.closed, { what: 'the dispatcher closing the huge body' });
    expect(stats.sent).toBeLessThan(20 * MB);
    const rssGrowth = (await dispatcherRssMb(dispatcher.port)) - rssBefore;
    console.info(
      `dispatcher: 100 MB body failed in ${hugeAttempt!.duration_ms} ms (${(stats.sent / MB).toFixed(1)} MB sent), ` +
        `trickle in ${trickleAttempt!.duration_ms} ms, rss growth ${rssGrowth.toFixed(1)} MB`,
    );
    expect(rssGrowth).toBeLessThan(60);
    expect(await dispatcher.stop()).toBe(0);
  });
});
