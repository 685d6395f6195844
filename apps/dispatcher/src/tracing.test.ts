import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { randomBytes } from 'node:crypto';
import {
  eventually,
  startApi,
  startDispatcher,
  startTestTarget,
  type ApiProcess,
  type DispatcherProcess,
  type TestTarget,
} from '@platform/testkit';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createProperty, register } from '../../api/tests/support/webhooks';
import {
  buildAccount,
  buildParty,
  login,
  startTestApi,
  testPrivateKeyPem,
  type TestApi,
} from '../../api/tests/support/api';

// One trace, followed across the real processes: the API process (PATCH) stores its context with
// the webhook, the dispatcher process's delivery spans continue it (one per attempt: the target
// fails once, then answers), and the target receives a traceparent whose parent is the attempt's
// span. Both processes run their production bundles and export OTLP/HTTP JSON to a receiver on
// 127.0.0.1.

interface OtlpSpan {
  traceId: string;
  spanId: string;
  parentSpanId?: string;
  name: string;
  attributes?: { key: string; value: Record<string, unknown> }[];
}

interface ReceivedSpan extends OtlpSpan {
  /** Its resource's string attributes (`service.name`, …). */
  resource: Record<string, string | undefined>;
}

/** A local OTLP/HTTP JSON receiver: POST /v1/traces, spans kept with their resource. */
async function startOtlpReceiver(): Promise<{ url: string; spans: ReceivedSpan[]; server: Server }> {
  const spans: ReceivedSpan[] = [];
  const server = createServer((request, response) => {
    const chunks: Buffer[] = [];
    request.on('data', (chunk: Buffer) => chunks.push(chunk));
    request.on('end', () => {
      if (request.url === '/v1/traces') {
        const body = JSON.parse(Buffer.concat(chunks).toString('utf8')) as {
          resourceSpans: {
            resource: { attributes: { key: string; value: { stringValue?: string } }[] };
            scopeSpans: { spans: OtlpSpan[] }[];
          }[];
        };
        for (const resourceSpans of body.resourceSpans) {
          const resource = Object.fromEntries(
            resourceSpans.resource.attributes.map((a) => [a.key, a.value.stringValue]),
          );
          for (const scope of resourceSpans.scopeSpans)
            for (const span of scope.spans) spans.push({ ...span, resource });
        }
      }
      response.writeHead(200, { 'content-type': 'application/json' }).end('{}');
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, spans, server };
}

const attribute = (span: OtlpSpan, key: string): unknown => {
  const value = span.attributes?.find((a) => a.key === key)?.value;
  if (!value) return undefined;
  const [raw] = Object.values(value);
  return 'intValue' in value ? Number(raw) : raw;
};

describe('tracing from the API write to the target (OTLP)', () => {
  let setup: TestApi;
  let api: ApiProcess;
  let dispatcher: DispatcherProcess;
  let target: TestTarget;
  let receiver: Awaited<ReturnType<typeof startOtlpReceiver>>;

  beforeAll(async () => {
    const secretKey = randomBytes(32).toString('base64');
    setup = await startTestApi({ SECRET_ENCRYPTION_KEY: secretKey });
    receiver = await startOtlpReceiver();
    const otel = {
      OTEL_EXPORTER_OTLP_ENDPOINT: receiver.url,
      OTEL_BSP_SCHEDULE_DELAY: '50',
      SECRET_ENCRYPTION_KEY: secretKey,
      JWT_PRIVATE_KEY: testPrivateKeyPem(),
    };
    [api, dispatcher] = await Promise.all([
      startApi(
        setup.db.url,
        { ...otel, OTEL_RESOURCE_ATTRIBUTES: 'deployment.environment=test' },
        { bundle: true },
      ),
      startDispatcher(
        setup.db.url,
        {
          ...otel,
          OTEL_SERVICE_NAME: 'dispatcher-e2e',
          LOG_LEVEL: 'warn',
          WEBHOOK_RETRY_SCHEDULE: '200ms,200ms',
        },
        { bundle: true },
      ),
    ]);
    let tries = 0;
    target = await startTestTarget(() => (++tries === 1 ? { status: 500 } : { status: 200 }));
  }, 90_000);

  afterAll(async () => {
    await dispatcher?.stop();
    await api?.stop();
    await target?.close();
    await new Promise((resolve) => receiver?.server.close(resolve));
    await setup?.close();
  });

  it('follows PATCH /api/properties/{id} through both attempts to the traceparent the target receives', async () => {
    const party = await buildParty(setup.deps, { type: 2 });
    const token = (await login(setup, (await buildAccount(setup.deps, { partyId: party.id })).email))
      .accessToken;
    const propertyId = await createProperty(setup, token, 'Lindenhof');
    await register(setup, token, { targetUrl: `${target.origin}/hook` });

    // the write, through the API process
    const response = await fetch(`${api.url}/api/properties/${propertyId}`, {
      method: 'PATCH',
      headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
      body: JSON.stringify({ name: 'Lindenhof Nord' }),
    });
    expect(response.status, await response.clone().text()).toBe(200);

    await eventually(() => target.requests.length === 2, { timeoutMs: 30_000 });
    const deliverySpans = () => receiver.spans.filter((s) => s.name === 'webhook delivery');
    await eventually(() => deliverySpans().length === 2, { timeoutMs: 30_000 });

    const patch = receiver.spans.find(
      (s) => s.resource['service.name'] === 'platform-api' && s.name.startsWith('PATCH '),
    );
    expect(patch?.name).toBe('PATCH /api/properties/:id');
    // the standard variables: OTEL_RESOURCE_ATTRIBUTES here, OTEL_SERVICE_NAME for the dispatcher
    expect(patch!.resource['deployment.environment']).toBe('test');
    const attempts = deliverySpans().sort(
      (a, b) => (attribute(a, 'webhook.attempt') as number) - (attribute(b, 'webhook.attempt') as number),
    );
    for (const [index, span] of attempts.entries()) {
      expect(span.resource['service.name']).toBe('dispatcher-e2e');
      expect(span.traceId).toBe(patch!.traceId);
      expect(span.parentSpanId).toBe(patch!.spanId);
      expect(attribute(span, 'webhook.attempt')).toBe(index + 1);
      expect(attribute(span, 'webhook.id')).toBe(Number(target.requests[index]!.webhookId));
      expect(attribute(span, 'server.address')).toBe(new URL(target.origin).host);
      expect(attribute(span, 'http.response.status_code')).toBe(index === 0 ? 500 : 200);
      // what the target received: same trace, its parent the attempt's span
      const traceparent = target.requests[index]!.headers.traceparent as string;
      expect(traceparent).toBe(`00-${patch!.traceId}-${span.spanId}-01`);
    }
    expect(attempts[0]!.spanId).not.toBe(attempts[1]!.spanId);
  }, 60_000);
});
