import { lookup } from 'node:dns';
import type { LookupFunction } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Deliverer, redactCredentials, RESPONSE_EXCERPT_BYTES, type DeliveryRequest } from './deliver';
import { refusingUrl, startTestTarget, type TestTarget } from '@platform/testkit';

const TIMEOUT_MS = 400;

let target: TestTarget;
let deliverer: Deliverer;

beforeAll(async () => {
  target = await startTestTarget();
  deliverer = new Deliverer({ timeoutMs: TIMEOUT_MS, allowPrivateTargets: true, connectionsPerOrigin: 4 });
});
afterAll(async () => {
  await deliverer.close();
  await target.close();
});

/** A delivery to `path` of the target, with a marker in the body to find it by. */
const delivery = (path = '/hook', id = String(Math.random())): DeliveryRequest => ({
  url: `${target.origin}${path}`,
  headers: { 'content-type': 'application/json', 'webhook-id': id },
  body: JSON.stringify({ id }),
});

describe('Deliverer against a real server', () => {
  it('posts the body and headers, and reports a 2xx as success with the answer', async () => {
    target.script = () => ({ status: 200, body: 'thanks', delayMs: 50 });
    const sent = delivery();
    const outcome = await deliverer.deliver(sent);
    expect(outcome).toMatchObject({ statusCode: 200, errorKind: null, responseBody: 'thanks' });
    expect(outcome.durationMs).toBeGreaterThanOrEqual(50);
    expect(outcome.startedAt).toBeInstanceOf(Date);
    const received = target.requestsFor(sent.headers['webhook-id']!);
    expect(received).toHaveLength(1);
    expect(received[0]).toMatchObject({ method: 'POST', path: '/hook', body: sent.body });
    expect(received[0]!.headers['content-type']).toBe('application/json');
  });

  it('counts every 2xx as success', async () => {
    for (const status of [201, 202, 204, 299]) {
      target.script = () => ({ status, body: status === 204 ? '' : 'ok' });
      expect((await deliverer.deliver(delivery())).errorKind, String(status)).toBeNull();
    }
  });

  it('fails any other status, 410 Gone included, keeping status and answer', async () => {
    for (const status of [400, 404, 410, 500, 502]) {
      target.script = () => ({ status, body: `no ${status}` });
      expect(await deliverer.deliver(delivery())).toMatchObject({
        statusCode: status,
        errorKind: 'status',
        responseBody: `no ${status}`,
      });
    }
  });

  it('does not follow redirects: a 3xx fails the attempt', async () => {
    for (const status of [301, 302, 303, 307, 308]) {
      target.script = (request) =>
        request.path === '/hook' ? { status, headers: { location: `${target.origin}/moved` } } : {};
      expect(await deliverer.deliver(delivery())).toMatchObject({
        statusCode: status,
        errorKind: 'redirect',
      });
    }
    expect(target.requests.filter((r) => r.path === '/moved')).toEqual([]);
  });

  it('passes Retry-After on only from a 429 or a 503', async () => {
    for (const [status, expected] of [
      [429, '7'],
      [503, '7'],
      [500, undefined],
      [200, undefined],
    ] as const) {
      target.script = () => ({ status, headers: { 'retry-after': '7' } });
      expect((await deliverer.deliver(delivery())).retryAfter, String(status)).toBe(expected);
    }
  });

  it('times out a target that never answers', async () => {
    target.script = () => ({ hang: true });
    const outcome = await deliverer.deliver(delivery());
    expect(outcome).toMatchObject({ statusCode: null, errorKind: 'timeout', responseBody: null });
    expect(outcome.durationMs).toBeGreaterThanOrEqual(TIMEOUT_MS - 5);
  });

  it('times out a target that sends its headers and then nothing', async () => {
    target.script = () => ({ hangAfterHeaders: true, status: 200 });
    const outcome = await deliverer.deliver(delivery());
    expect(outcome.errorKind).toBe('timeout');
    expect(outcome.durationMs).toBeGreaterThanOrEqual(TIMEOUT_MS - 5);
  });

  it('times out a target that trickles its body, though bytes keep coming', async () => {
    target.script = () => ({
      handle: (response) => {
        response.writeHead(200);
        const timer = setInterval(() => response.write('.'), 20);
        response.on('close', () => clearInterval(timer));
      },
    });
    // the excerpt stops at 4 KiB, which this target would take 80 s to send
    const outcome = await deliverer.deliver(delivery());
    expect(outcome.errorKind).toBe('timeout');
  });

  it('reports a refused connection', async () => {
    const outcome = await deliverer.deliver({ ...delivery(), url: await refusingUrl() });
    expect(outcome).toMatchObject({ statusCode: null, errorKind: 'connection-refused', responseBody: null });
  });

  it('reports a connection the target resets without answering', async () => {
    target.script = () => ({ reset: true });
    const outcome = await deliverer.deliver(delivery());
    expect(outcome).toMatchObject({ statusCode: null, errorKind: 'connection-reset', responseBody: null });
  });

  it('keeps the first 4 KiB of a large answer', async () => {
    const body = `start-${'x'.repeat(100 * 1024)}`;
    target.script = () => ({ status: 500, body });
    const outcome = await deliverer.deliver(delivery());
    expect(outcome.responseBody).toBe(body.slice(0, RESPONSE_EXCERPT_BYTES));
    expect(RESPONSE_EXCERPT_BYTES).toBe(4096);
  });

  it('cuts the excerpt before a character it would split, so it is valid text of at most 4 KiB', async () => {
    // 'é' is two bytes, and its first byte is byte 4096
    const body = `${'a'.repeat(RESPONSE_EXCERPT_BYTES - 1)}é and more`;
    target.script = () => ({ status: 200, body });
    const outcome = await deliverer.deliver(delivery());
    expect(outcome.responseBody).toBe('a'.repeat(RESPONSE_EXCERPT_BYTES - 1));
  });

  it('keeps an excerpt of a binary answer storable: no NUL characters, which Postgres text refuses', async () => {
    target.script = () => ({ status: 200, body: Buffer.from([0x61, 0x00, 0x62, 0xff, 0x63]) });
    const outcome = await deliverer.deliver(delivery());
    expect(outcome.errorKind).toBeNull();
    expect(outcome.responseBody).not.toContain('\u0000');
    expect(outcome.responseBody).toBe('a\ufffdb\ufffdc');
  });

  it('reuses a keep-alive connection for the next delivery to the same origin', async () => {
    target.script = () => ({ status: 200, body: 'ok' });
    await deliverer.deliver(delivery());
    const before = target.connections;
    for (let i = 0; i < 3; i++) await deliverer.deliver(delivery());
    expect(target.connections).toBe(before);
  });

  it('reports a URL it cannot parse', async () => {
    expect((await deliverer.deliver({ ...delivery(), url: 'not a url' })).errorKind).toBe('invalid-url');
  });
});

describe('credentials in the answer', () => {
  it('stores an echoing target’s answer with every credential of its request redacted', async () => {
    // the target answers with the request's headers and body, as debug endpoints do
    target.script = (request) => ({
      status: 500,
      body: JSON.stringify({ headers: request.headers, body: request.body }),
    });
    const sent: DeliveryRequest = {
      ...delivery(),
      headers: {
        ...delivery().headers,
        authorization: 'Basic dXNlcjpwIjQkc3c=',
        'x-api-key': 'key-0123456789',
      },
      credentials: ['p"4$sw', 'user:p"4$sw', 'dXNlcjpwIjQkc3c=', 'key-0123456789'],
    };
    const { responseBody } = await deliverer.deliver(sent);
    expect(responseBody).toContain('"authorization":"Basic [redacted]"');
    expect(responseBody).toContain('"x-api-key":"[redacted]"');
    for (const value of ['dXNlcjpwIjQkc3c=', 'key-0123456789', 'p\\"4$sw']) {
      expect(responseBody).not.toContain(value);
    }
  });

  it('redacts each value as sent and JSON-escaped, the longest first, and a cut-off start of one', () => {
    expect(redactCredentials('user:p"w and p\\"w', ['p"w', 'user:p"w'])).toBe('[redacted] and [redacted]');
    expect(redactCredentials('nothing here', ['secret'])).toBe('nothing here');
    expect(redactCredentials('empty values are ignored', [''])).toBe('empty values are ignored');
    // an excerpt cut at 4 KiB in the middle of a token keeps none of it
    const cut = `${'x'.repeat(RESPONSE_EXCERPT_BYTES - 6)}eyJhbG`;
    expect(redactCredentials(cut, ['eyJhbGciOiJSUzI1NiJ9.payload.signature'])).toBe(
      `${'x'.repeat(RESPONSE_EXCERPT_BYTES - 6)}[redacted]`,
    );
    // also when a whole credential earlier in it was redacted (which shortens the excerpt)
    const token = 'eyJhbGciOiJSUzI1NiJ9.payload.signature';
    const echoed = `${token}${'x'.repeat(RESPONSE_EXCERPT_BYTES - token.length - 6)}eyJhbG`;
    expect(redactCredentials(echoed, [token])).toBe(
      `[redacted]${'x'.repeat(RESPONSE_EXCERPT_BYTES - token.length - 6)}[redacted]`,
    );
    // an answer that was not cut keeps its tail
    expect(redactCredentials('ends with eyJhbG', ['eyJhbGciOiJSUzI1NiJ9.payload.signature'])).toBe(
      'ends with eyJhbG',
    );
  });
});

describe('Deliverer refusing private targets', () => {
  let strict: Deliverer;
  beforeAll(() => {
    strict = new Deliverer({ timeoutMs: TIMEOUT_MS, allowPrivateTargets: false, connectionsPerOrigin: 4 });
  });
  afterAll(() => strict.close());

  const port = () => new URL(target.origin).port;

  it('refuses literal loopback addresses and localhost without connecting', async () => {
    const before = target.connections;
    for (const host of [
      '127.0.0.1',
      'localhost',
      '[::1]',
      '2130706433',
      '127.1',
      'LOCALHOST',
      'localhost.',
    ]) {
      const outcome = await strict.deliver({ ...delivery(), url: `http://${host}:${port()}/hook` });
      expect(outcome.errorKind, host).toBe('private-address');
    }
    expect(target.connections).toBe(before);
  });

  // a name (not a literal) that resolves to a private address is only caught at connect time
  it('refuses a name that resolves to a private address, at connect time', async () => {
    // the resolver answers every name with the live target's address, as DNS would for a name
    // pointed at it; asked for a literal address, the system resolver answers it without DNS
    const toTarget: LookupFunction = (_name, options, callback) => lookup('127.0.0.1', options, callback);
    const url = `http://webhooks.example.test:${port()}/hook`;
    const permissive = new Deliverer({
      timeoutMs: TIMEOUT_MS,
      allowPrivateTargets: true,
      connectionsPerOrigin: 4,
      lookup: toTarget,
    });
    const refusing = new Deliverer({
      timeoutMs: TIMEOUT_MS,
      allowPrivateTargets: false,
      connectionsPerOrigin: 4,
      lookup: toTarget,
    });
    target.script = () => ({ status: 200, body: 'ok' });
    try {
      // with private targets allowed the name reaches the target, so the refusal below is the check
      expect((await permissive.deliver({ ...delivery(), url })).errorKind).toBeNull();
      const before = target.connections;
      expect((await refusing.deliver({ ...delivery(), url })).errorKind).toBe('private-address');
      expect(target.connections).toBe(before);
    } finally {
      await Promise.all([permissive.close(), refusing.close()]);
    }
  });
});
