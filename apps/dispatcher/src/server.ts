import { createServer, type Server } from 'node:http';
import { answerClientError } from '@platform/shared';
import { METRICS_CONTENT_TYPE } from './metrics';

/** What `/healthz` reports; read on every request, so always current. */
export interface DispatcherHealth {
  /** Whether the LISTEN connection is up. */
  listening: boolean;
  /** The claim loop: running, stalled (no turn for too long), or stopped (shutting down). */
  loop: 'running' | 'stalled' | 'stopped';
  /** Deliveries in flight. */
  inFlight: number;
}

export interface StatusSources {
  health(): DispatcherHealth;
  /** The Prometheus exposition text. */
  metrics(): Promise<string>;
}

/**
 * The dispatcher's HTTP surface: `GET /healthz` and `GET /metrics`. Health is 200 only while the
 * LISTEN connection is up (else the dispatcher would only wake up on its slow poll) and the loop
 * is running; otherwise 503, so an orchestrator restarts a stuck replica or stops sending it
 * traffic while it shuts down. It also names the Node version the replica runs on.
 */
export function createStatusServer(sources: StatusSources): Server {
  return createServer((request, response) => {
    const path = new URL(request.url ?? '/', 'http://localhost').pathname;
    if (path !== '/healthz' && path !== '/metrics') {
      response.writeHead(404, { 'content-type': 'application/json' }).end('{"status":"not found"}');
      return;
    }
    if (request.method !== 'GET' && request.method !== 'HEAD') {
      response.writeHead(405, { allow: 'GET, HEAD' }).end();
      return;
    }
    if (path === '/metrics') {
      sources.metrics().then(
        (text) => response.writeHead(200, { 'content-type': METRICS_CONTENT_TYPE }).end(text),
        () => response.writeHead(500, { 'content-type': 'text/plain' }).end('metrics failed\n'),
      );
      return;
    }
    const health = sources.health();
    const ok = health.listening && health.loop === 'running';
    response
      .writeHead(ok ? 200 : 503, { 'content-type': 'application/json', 'cache-control': 'no-store' })
      .end(
        JSON.stringify({ status: ok ? 'ok' : 'unavailable', ...health, runtime: { node: process.version } }),
      );
  }).on('clientError', answerClientError);
}
