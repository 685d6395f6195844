// Tracing (docs/dispatcher.md › Tracing): OpenTelemetry, set up here for the API and the
// dispatcher alike, and off unless an OTLP endpoint is configured. Off, nothing is registered:
// `tracingActive()` is false, every hook below is skipped, and the hot paths run as before.
import {
  context,
  propagation,
  SpanKind,
  SpanStatusCode,
  trace,
  type Context,
  type Span,
  type Tracer,
} from '@opentelemetry/api';
import type { SpanExporter } from '@opentelemetry/sdk-trace';
import type { Env, Tracing } from './tracing-sdk';

export type { Env, Tracing } from './tracing-sdk';

/** A W3C trace context as stored with a webhook (`webhooks.trace_context`). */
export interface TraceContext {
  traceparent: string;
  tracestate?: string;
}

/** Whether the environment asks for tracing: an OTLP endpoint is set and the SDK is not disabled. */
export function tracingConfigured(env: Env = process.env): boolean {
  return (
    Boolean(env.OTEL_EXPORTER_OTLP_ENDPOINT || env.OTEL_EXPORTER_OTLP_TRACES_ENDPOINT) &&
    env.OTEL_SDK_DISABLED?.trim().toLowerCase() !== 'true'
  );
}

let tracer: Tracer | undefined;

/** Whether tracing was started in this process: the hooks below do nothing otherwise. */
export function tracingActive(): boolean {
  return tracer !== undefined;
}

/**
 * Starts tracing for `serviceName` (the default of `OTEL_SERVICE_NAME`) when the environment asks
 * for it, or always when given an `exporter` (tests: an in-memory one, spans exported at once).
 * The SDK is imported only then, so a process without tracing never loads it. The OTLP/HTTP
 * exporter reads its own variables (`OTEL_EXPORTER_OTLP_[TRACES_]ENDPOINT`, `…_HEADERS`,
 * `…_TIMEOUT`); the resource comes from `OTEL_SERVICE_NAME` and `OTEL_RESOURCE_ATTRIBUTES`; the
 * sampler from `OTEL_TRACES_SAMPLER` (`_ARG`); the batch delay from `OTEL_BSP_SCHEDULE_DELAY`.
 * Resolves undefined when tracing stays off.
 */
export async function startTracing(options: {
  serviceName: string;
  env?: Env;
  exporter?: SpanExporter;
}): Promise<Tracing | undefined> {
  const env = options.env ?? process.env;
  if (!options.exporter && !tracingConfigured(env)) return undefined;
  const { registerSdk } = await import('./tracing-sdk');
  const sdk = registerSdk({ serviceName: options.serviceName, env, exporter: options.exporter });
  tracer = trace.getTracer('platform');
  return {
    flush: sdk.flush,
    async shutdown() {
      tracer = undefined;
      await sdk.shutdown();
    },
  };
}

/**
 * Runs `handle` in a server span for an incoming request, continuing the caller's
 * `traceparent`/`tracestate` when it sent them; `handle` names the span once the route is known
 * and sets the status code. Without tracing, `handle` gets a span that records nothing.
 */
export async function traceRequest<T>(
  method: string,
  headers: Record<string, string | string[] | undefined>,
  handle: (span: Span) => Promise<T>,
): Promise<T> {
  const active = tracer;
  if (!active) return handle(trace.wrapSpanContext({ traceId: '', spanId: '', traceFlags: 0 }));
  const parent = propagation.extract(context.active(), headers);
  const span = active.startSpan(method, { kind: SpanKind.SERVER }, parent);
  try {
    return await context.with(trace.setSpan(parent, span), () => handle(span));
  } catch (error) {
    span.recordException(error as Error);
    span.setStatus({ code: SpanStatusCode.ERROR });
    throw error;
  } finally {
    span.end();
  }
}

/** The active span's W3C context, to store with what this request enqueues; undefined when off or unsampled. */
export function currentTraceContext(): TraceContext | undefined {
  if (!tracer) return undefined;
  const carrier: Partial<TraceContext> = {};
  propagation.inject(context.active(), carrier);
  return carrier.traceparent ? (carrier as TraceContext) : undefined;
}

/** The context a stored trace context continues (the root context when there is none). */
function storedContext(stored: TraceContext | null | undefined): Context {
  return stored ? propagation.extract(context.active(), stored) : context.active();
}

/**
 * One delivery attempt of `webhook` in a client span `webhook delivery`, child of the trace the
 * webhook was written in (its stored context), with the webhook id, the attempt, the target host
 * and the answer's status code; the request carries a `traceparent` whose parent is this span.
 * Without tracing, just `send(request)`.
 */
export async function traceDelivery<
  Request extends { url: string; headers: Record<string, string> },
  Outcome extends { statusCode: number | null; errorKind: string | null },
>(
  webhook: { id: number; attempt: number; registration_id: number; trace_context?: TraceContext | null },
  request: Request,
  send: (request: Request) => Promise<Outcome>,
): Promise<Outcome> {
  const active = tracer;
  if (!active) return send(request);
  let host: string | undefined;
  try {
    host = new URL(request.url).host;
  } catch {
    host = undefined;
  }
  const span = active.startSpan(
    'webhook delivery',
    {
      kind: SpanKind.CLIENT,
      attributes: {
        'webhook.id': webhook.id,
        'webhook.registration_id': webhook.registration_id,
        'webhook.attempt': webhook.attempt,
        'http.request.method': 'POST',
        ...(host ? { 'server.address': host } : {}),
      },
    },
    storedContext(webhook.trace_context),
  );
  const headers = { ...request.headers };
  propagation.inject(trace.setSpan(context.active(), span), headers);
  try {
    const outcome = await send({ ...request, headers });
    if (outcome.statusCode !== null) span.setAttribute('http.response.status_code', outcome.statusCode);
    if (outcome.errorKind !== null) {
      span.setAttribute('error.type', outcome.errorKind);
      span.setStatus({ code: SpanStatusCode.ERROR, message: outcome.errorKind });
    }
    return outcome;
  } finally {
    span.end();
  }
}
