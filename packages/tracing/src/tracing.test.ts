import { InMemorySpanExporter } from '@opentelemetry/sdk-trace';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { samplerFromEnv } from './tracing-sdk';
import {
  currentTraceContext,
  startTracing,
  traceDelivery,
  traceRequest,
  tracingActive,
  tracingConfigured,
  type Tracing,
} from './tracing';

/** A delivery's request and outcome, as far as tracing reads them. */
interface DeliveryRequest {
  url: string;
  headers: Record<string, string>;
  body: string;
}
interface DeliveryOutcome {
  statusCode: number | null;
  errorKind: string | null;
}

const request: DeliveryRequest = {
  url: 'https://hooks.example.com:8443/in',
  headers: { 'webhook-id': '7' },
  body: '{}',
};

/** A send that records the request and answers `statusCode`. */
function sender(statusCode: number) {
  const sent: DeliveryRequest[] = [];
  const send = (delivered: DeliveryRequest): Promise<DeliveryOutcome> => {
    sent.push(delivered);
    return Promise.resolve({ statusCode, errorKind: statusCode < 300 ? null : 'status' });
  };
  return { sent, send };
}

describe('tracing off', () => {
  it('is off without an OTLP endpoint, and on with either variable', async () => {
    expect(tracingConfigured({})).toBe(false);
    expect(tracingConfigured({ OTEL_EXPORTER_OTLP_ENDPOINT: 'http://127.0.0.1:4318' })).toBe(true);
    expect(tracingConfigured({ OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: 'http://127.0.0.1:4318/v1/traces' })).toBe(
      true,
    );
    expect(
      tracingConfigured({ OTEL_EXPORTER_OTLP_ENDPOINT: 'http://127.0.0.1:4318', OTEL_SDK_DISABLED: 'true' }),
    ).toBe(false);
    expect(await startTracing({ serviceName: 'test', env: {} })).toBeUndefined();
    expect(tracingActive()).toBe(false);
  });

  it('sends the request as it is and stores no context', async () => {
    const { sent, send } = sender(200);
    await traceDelivery({ id: 7, attempt: 1, registration_id: 3, trace_context: null }, request, send);
    expect(sent[0]).toBe(request);
    expect(sent[0]!.headers.traceparent).toBeUndefined();
    expect(await traceRequest('PATCH', {}, () => Promise.resolve(currentTraceContext()))).toBeUndefined();
  });
});

describe('tracing on (in-memory exporter)', () => {
  let tracing: Tracing | undefined;
  // a fresh one per test: a stopped provider stops its exporter
  let exporter: InMemorySpanExporter;
  beforeEach(() => {
    exporter = new InMemorySpanExporter();
  });
  afterEach(async () => {
    await tracing?.shutdown();
  });

  it('continues a request traceparent and hands its context to what the request stores', async () => {
    tracing = await startTracing({ serviceName: 'test', env: {}, exporter });
    const incoming = '00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01';
    const stored = await traceRequest('PATCH', { traceparent: incoming, tracestate: 'vendor=x' }, () =>
      Promise.resolve(currentTraceContext()),
    );
    const [server] = exporter.getFinishedSpans();
    expect(server!.spanContext().traceId).toBe('0af7651916cd43dd8448eb211c80319c');
    expect(server!.parentSpanContext?.spanId).toBe('b7ad6b7169203331');
    expect(stored).toEqual({
      traceparent: `00-0af7651916cd43dd8448eb211c80319c-${server!.spanContext().spanId}-01`,
      tracestate: 'vendor=x',
    });
  });

  it('makes one span per attempt, child of the stored context, parent of the traceparent sent', async () => {
    tracing = await startTracing({ serviceName: 'test', env: {}, exporter });
    const stored = { traceparent: '00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01' };
    const failing = sender(503);
    await traceDelivery(
      { id: 7, attempt: 1, registration_id: 3, trace_context: stored },
      request,
      failing.send,
    );
    const answering = sender(204);
    await traceDelivery(
      { id: 7, attempt: 2, registration_id: 3, trace_context: stored },
      request,
      answering.send,
    );

    const spans = exporter.getFinishedSpans();
    expect(spans).toHaveLength(2);
    for (const [index, span] of spans.entries()) {
      expect(span.name).toBe('webhook delivery');
      expect(span.spanContext().traceId).toBe('0af7651916cd43dd8448eb211c80319c');
      expect(span.parentSpanContext?.spanId).toBe('b7ad6b7169203331');
      expect(span.attributes).toMatchObject({
        'webhook.id': 7,
        'webhook.attempt': index + 1,
        'server.address': 'hooks.example.com:8443',
        'http.response.status_code': index === 0 ? 503 : 204,
      });
    }
    expect(spans[0]!.status.code).toBe(2); // ERROR
    expect(spans[0]!.attributes['error.type']).toBe('status');
    expect(spans[1]!.status.code).toBe(0);
    expect(failing.sent[0]!.headers.traceparent).toBe(
      `00-0af7651916cd43dd8448eb211c80319c-${spans[0]!.spanContext().spanId}-01`,
    );
    expect(answering.sent[0]!.headers.traceparent).toBe(
      `00-0af7651916cd43dd8448eb211c80319c-${spans[1]!.spanContext().spanId}-01`,
    );
    // the request given is left as it was (a retry builds its own)
    expect(request.headers.traceparent).toBeUndefined();
  });

  it('starts a trace of its own for a webhook written without one', async () => {
    tracing = await startTracing({ serviceName: 'test', env: {}, exporter });
    const { sent, send } = sender(200);
    await traceDelivery({ id: 8, attempt: 1, registration_id: 3, trace_context: null }, request, send);
    const [span] = exporter.getFinishedSpans();
    expect(span!.parentSpanContext).toBeUndefined();
    expect(sent[0]!.headers.traceparent).toContain(span!.spanContext().spanId);
  });

  it('honours OTEL_TRACES_SAMPLER', () => {
    expect(samplerFromEnv({}).toString()).toContain('ParentBased');
    expect(samplerFromEnv({ OTEL_TRACES_SAMPLER: 'always_off' }).toString()).toBe('AlwaysOffSampler');
    expect(
      samplerFromEnv({ OTEL_TRACES_SAMPLER: 'traceidratio', OTEL_TRACES_SAMPLER_ARG: '0.25' }).toString(),
    ).toContain('0.25');
  });
});
