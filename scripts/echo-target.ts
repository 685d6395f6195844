/**
 * The demo's bundled webhook target (`pnpm start` runs it beside the API and the dispatcher): a
 * plain HTTP server on 127.0.0.1 that answers 2xx, checks the Standard Webhooks signature when it
 * knows the registration's secret, and logs one line per delivery. A registration's URL tells it
 * to fail: `?failFirst=N` answers 503 to the first N requests of that path (counted since this
 * process started), so the dispatcher retries and, when N reaches the attempt count, fails it.
 *
 * Environment: ECHO_TARGET_PORT (3002), ECHO_TARGET_SECRETS (JSON array of `whsec_` secrets).
 */
import { createServer } from 'node:http';
import { signStandardWebhook } from '../packages/delivery/src/delivery-request';

const port = Number(process.env.ECHO_TARGET_PORT || 3002);
const secrets = JSON.parse(process.env.ECHO_TARGET_SECRETS || '[]') as string[];
const triesByPath = new Map<string, number>();

/** `ok`, `BAD`, or `unchecked` when no secret is known or the headers are missing. */
function signatureVerdict(headers: Record<string, string | string[] | undefined>, body: string): string {
  const [id, timestamp, signature] = ['webhook-id', 'webhook-timestamp', 'webhook-signature'].map((name) =>
    String(headers[name] ?? ''),
  );
  if (!secrets.length || !id || !timestamp || !signature) return 'unchecked';
  const offered = signature.split(' ');
  const valid = secrets.some((secret) =>
    offered.includes(signStandardWebhook(secret, id, Number(timestamp), body)),
  );
  return valid ? 'ok' : 'BAD';
}

const server = createServer((request, response) => {
  const chunks: Buffer[] = [];
  request.on('data', (chunk: Buffer) => chunks.push(chunk));
  request.on('end', () => {
    const url = new URL(request.url ?? '/', 'http://echo');
    const tries = (triesByPath.get(url.pathname) ?? 0) + 1;
    triesByPath.set(url.pathname, tries);
    const failFirst = Number(url.searchParams.get('failFirst') ?? 0);
    const status = tries <= failFirst ? 503 : 200;
    const body = Buffer.concat(chunks).toString('utf8');
    let event = '';
    try {
      const parsed = JSON.parse(body) as {
        event?: { entityName?: string; type?: number };
        entity?: { id?: number };
      };
      event = ` ${parsed.event?.entityName ?? '?'} ${parsed.event?.type ?? '?'} #${parsed.entity?.id ?? '?'}`;
    } catch {
      event = ' (not JSON)';
    }
    const failing = status === 503 ? ` (failing try ${tries} of ${failFirst})` : '';
    console.log(
      `[echo-target] ${request.method} ${url.pathname} webhook ${String(request.headers['webhook-id'] ?? '-')}` +
        `${event} signature ${signatureVerdict(request.headers, body)} → ${status}${failing}`,
    );
    response.writeHead(status, { 'content-type': 'text/plain' });
    response.end(status === 200 ? 'ok' : 'demo: failing on purpose');
  });
});

server.listen(port, '127.0.0.1', () => console.log(`[echo-target] listening on http://127.0.0.1:${port}`));
for (const signal of ['SIGINT', 'SIGTERM'] as const)
  process.on(signal, () => server.close(() => process.exit(0)));
