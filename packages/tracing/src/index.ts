// Tracing (docs/dispatcher.md › Tracing): OpenTelemetry for the API's requests and writes and the
// dispatcher's deliveries, off unless an OTLP endpoint is configured.
export * from './tracing';
