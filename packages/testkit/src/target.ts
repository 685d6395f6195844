import { createServer, type IncomingHttpHeaders, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import { eventually } from './wait';

// A recording HTTP server on 127.0.0.1 that answers each request as a script says.

/** One request the target received. */
export interface ReceivedRequest {
  /** 1-based order of arrival at this target. */
  index: number;
  method: string;
  path: string;
  headers: IncomingHttpHeaders;
  body: string;
  /** The Standard Webhooks `webhook-id` header. */
  webhookId: string | undefined;
  /** `Date.now()` when the whole body had arrived. */
  receivedAt: number;
  /** `Date.now()` when the answer was sent (or the socket destroyed); undefined until then. */
  answeredAt?: number;
}

/**
 * How the target answers one request: a status (default 200) with headers and body after an
 * optional delay; `reset` destroys the connection without answering; `hang` never answers;
 * `hangAfterHeaders` sends the status line and headers, then nothing more.
 */
export type TargetAnswer =
  | {
      status?: number;
      headers?: Record<string, string>;
      body?: string | Buffer;
      delayMs?: number;
    }
  | { reset: true }
  | { hang: true }
  | { hangAfterHeaders: true; status?: number }
  /** Answers by hand, for anything the shapes above cannot say. */
  | { handle(response: ServerResponse): void };

export type TargetScript = (request: ReceivedRequest) => TargetAnswer | Promise<TargetAnswer>;

export interface TestTarget {
  /** `http://<host>:<port>/hook`. */
  url: string;
  /** `http://<host>:<port>`, for other paths. */
  origin: string;
  /** Every request so far, in order of arrival. */
  readonly requests: ReceivedRequest[];
  /** TCP connections accepted so far. */
  readonly connections: number;
  /** How requests are answered from now on; replaceable at any time. */
  script: TargetScript;
  /** The requests carrying `webhook-id` = `id`, in order of arrival. */
  requestsFor(id: number | string): ReceivedRequest[];
  /** Resolves once `count` requests for webhook `id` have been answered (or reset). */
  waitForAnswered(id: number | string, count?: number, timeoutMs?: number): Promise<ReceivedRequest[]>;
  close(): Promise<void>;
}

/** The parsed JSON body of a delivery. */
export function bodyOf<T = { entity: Record<string, unknown>; event: Record<string, unknown> }>(
  request: ReceivedRequest,
): T {
  return JSON.parse(request.body) as T;
}

/**
 * Starts a target on a free port of `options.host` (127.0.0.1 unless told); by default every
 * request gets a 200 `ok`.
 */
export async function startTestTarget(
  script: TargetScript = () => ({}),
  options: { host?: string } = {},
): Promise<TestTarget> {
  const host = options.host ?? '127.0.0.1';
  const requests: ReceivedRequest[] = [];
  const sockets = new Set<Socket>();
  const server: Server = createServer((incoming, response) => {
    const chunks: Buffer[] = [];
    incoming.on('data', (chunk: Buffer) => chunks.push(chunk));
    incoming.on('end', () => {
      const request: ReceivedRequest = {
        index: requests.length + 1,
        method: incoming.method ?? '',
        path: incoming.url ?? '',
        headers: incoming.headers,
        body: Buffer.concat(chunks).toString('utf8'),
        webhookId: incoming.headers['webhook-id'] as string | undefined,
        receivedAt: Date.now(),
      };
      requests.push(request);
      void Promise.resolve()
        .then(() => target.script(request))
        .then(async (answer) => {
          if ('reset' in answer) {
            request.answeredAt = Date.now();
            incoming.socket.destroy();
            return;
          }
          if ('hang' in answer) return;
          if ('handle' in answer) {
            answer.handle(response);
            return;
          }
          if ('hangAfterHeaders' in answer) {
            response.writeHead(answer.status ?? 200, { 'content-type': 'text/plain' });
            response.write('partial');
            response.flushHeaders();
            return;
          }
          if (answer.delayMs) await new Promise((r) => setTimeout(r, answer.delayMs));
          response.writeHead(answer.status ?? 200, { 'content-type': 'text/plain', ...answer.headers });
          // stamped before sending, so a request that the answer made possible cannot seem earlier
          request.answeredAt = Date.now();
          response.end(answer.body ?? 'ok');
        })
        .catch((error: unknown) => {
          request.answeredAt = Date.now();
          response.destroy(error as Error);
        });
    });
  });
  let connections = 0;
  server.on('connection', (socket) => {
    connections++;
    sockets.add(socket);
    socket.on('close', () => sockets.delete(socket));
  });
  await new Promise<void>((r) => server.listen(0, host, r));
  const origin = `http://${host.includes(':') ? `[${host}]` : host}:${(server.address() as AddressInfo).port}`;
  const requestsFor = (id: number | string) => requests.filter((r) => r.webhookId === String(id));
  const target: TestTarget = {
    url: `${origin}/hook`,
    origin,
    requests,
    get connections() {
      return connections;
    },
    script,
    requestsFor,
    waitForAnswered: async (id, count = 1, timeoutMs = 20_000) => {
      await eventually(() => requestsFor(id).filter((r) => r.answeredAt !== undefined).length >= count, {
        timeoutMs,
        what: `${count} answered request(s) for webhook ${id}`,
      });
      return requestsFor(id);
    },
    close: async () => {
      // hanging requests would keep close() waiting forever
      for (const socket of sockets) socket.destroy();
      await new Promise((r) => server.close(r));
    },
  };
  return target;
}
