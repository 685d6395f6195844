import { createServer, type Server } from 'node:http';

/** What the status endpoints report; read on every request, so always current. */
export interface DispatcherStatus {
  /** Whether the LISTEN connection is up. */
  listening(): boolean;
  /** Notifications received on the wake-up channel since start. */
  notificationsTotal(): number;
}

/** Prometheus text exposition format, version 0.0.4. */
const METRICS_CONTENT_TYPE = 'text/plain; version=0.0.4; charset=utf-8';

/** Renders the metrics by hand: a handful of series do not justify a client library. */
export function renderMetrics(status: DispatcherStatus): string {
  const series = [
    ['dispatcher_up', 'gauge', 'Whether the dispatcher process is running.', 1],
    ['dispatcher_listening', 'gauge', 'Whether the LISTEN connection is up.', status.listening() ? 1 : 0],
    [
      'dispatcher_notifications_total',
      'counter',
      'Wake-up notifications received since start.',
      status.notificationsTotal(),
    ],
  ] as const;
  return series
    .map(([name, type, help, value]) => `# HELP ${name} ${help}\n# TYPE ${name} ${type}\n${name} ${value}\n`)
    .join('');
}

/**
 * The dispatcher's HTTP surface: `GET /healthz` (503 while the LISTEN connection is down, so an
 * orchestrator can tell a dispatcher that would only wake up on its slow poll) and `GET /metrics`.
 */
export function createStatusServer(status: DispatcherStatus): Server {
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
      response.writeHead(200, { 'content-type': METRICS_CONTENT_TYPE }).end(renderMetrics(status));
      return;
    }
    const listening = status.listening();
    response
      .writeHead(listening ? 200 : 503, { 'content-type': 'application/json', 'cache-control': 'no-store' })
      .end(JSON.stringify({ status: listening ? 'ok' : 'unavailable', listening }));
  });
}
