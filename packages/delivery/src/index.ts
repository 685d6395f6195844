// One delivery, as the dispatcher makes it for every webhook and the API for a test event
// (docs/webhooks.md): the request (body, Standard Webhooks signature, target authorization),
// the HTTP exchange (SSRF guard, timeout, excerpt, redaction) and the platform-signed tokens.
export * from './deliver';
export * from './delivery-request';
export * from './safe-lookup';
export * from './target-auth';
