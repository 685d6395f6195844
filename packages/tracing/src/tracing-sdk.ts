// The OpenTelemetry SDK, registered by `startTracing` (tracing.ts) and imported only when tracing
// is on: a process without it never loads this module.
import { context, propagation, trace } from '@opentelemetry/api';
import { AsyncLocalStorageContextManager } from '@opentelemetry/context-async-hooks';
import { W3CTraceContextPropagator } from '@opentelemetry/core';
import { OTLPTraceExporter } from '@opentelemetry/exporter-trace-otlp-http';
import {
  defaultResource,
  detectResources,
  envDetector,
  resourceFromAttributes,
} from '@opentelemetry/resources';
import {
  AlwaysOffSampler,
  AlwaysOnSampler,
  BatchSpanProcessor,
  ParentBasedSampler,
  SimpleSpanProcessor,
  TraceIdRatioBasedSampler,
  TracerProvider,
  type Sampler,
  type SpanExporter,
} from '@opentelemetry/sdk-trace';

/** The environment variables tracing reads (`process.env` unless a test passes its own). */
export type Env = Record<string, string | undefined>;

/** Tracing started: what a process calls on its way out. */
export interface Tracing {
  /** Exports what is buffered and unregisters everything; tracing is off afterwards. */
  shutdown(): Promise<void>;
  /** Exports what is buffered now. */
  flush(): Promise<void>;
}

/**
 * The sampler `OTEL_TRACES_SAMPLER` (and `_ARG`) name, as the specification lists them; the
 * default, as there, is `parentbased_always_on`.
 */
export function samplerFromEnv(env: Env = process.env): Sampler {
  const ratio = Number(env.OTEL_TRACES_SAMPLER_ARG ?? '1');
  const ratioSampler = () => new TraceIdRatioBasedSampler(Number.isFinite(ratio) ? ratio : 1);
  switch (env.OTEL_TRACES_SAMPLER?.trim().toLowerCase()) {
    case 'always_on':
      return new AlwaysOnSampler();
    case 'always_off':
      return new AlwaysOffSampler();
    case 'traceidratio':
      return ratioSampler();
    case 'parentbased_always_off':
      return new ParentBasedSampler({ root: new AlwaysOffSampler() });
    case 'parentbased_traceidratio':
      return new ParentBasedSampler({ root: ratioSampler() });
    default:
      return new ParentBasedSampler({ root: new AlwaysOnSampler() });
  }
}

/** Registers the global tracer provider, context manager and W3C propagator. */
export function registerSdk(options: { serviceName: string; env: Env; exporter?: SpanExporter }): Tracing {
  const { env } = options;
  const delay = Number(env.OTEL_BSP_SCHEDULE_DELAY);
  const processor = options.exporter
    ? new SimpleSpanProcessor({ exporter: options.exporter })
    : new BatchSpanProcessor({
        exporter: new OTLPTraceExporter(),
        ...(Number.isFinite(delay) && delay > 0 ? { scheduledDelayMillis: delay } : {}),
      });
  const provider = new TracerProvider({
    sampler: samplerFromEnv(env),
    resource: defaultResource()
      .merge(resourceFromAttributes({ 'service.name': options.serviceName }))
      .merge(detectResources({ detectors: [envDetector] })),
    spanProcessors: [processor],
  });
  trace.setGlobalTracerProvider(provider);
  context.setGlobalContextManager(new AsyncLocalStorageContextManager().enable());
  propagation.setGlobalPropagator(new W3CTraceContextPropagator());
  return {
    flush: () => provider.forceFlush(),
    async shutdown() {
      await provider.shutdown();
      trace.disable();
      context.disable();
      propagation.disable();
    },
  };
}
