import { InMemorySpanExporter } from '@opentelemetry/sdk-trace';
import { partyBucket, registrationBucket } from '@platform/db';
import { startTracing, type Tracing } from '@platform/tracing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildAccount, buildParty, login, startTestApi, type TestApi } from '../../tests/support/api';

// The API's server span per request, with tracing on (an in-memory exporter): named by its route,
// continuing the caller's traceparent, and what its write enqueues stores its context.

describe('request spans (tracing on)', () => {
  let api: TestApi;
  let tracing: Tracing | undefined;
  const exporter = new InMemorySpanExporter();

  beforeAll(async () => {
    // before the app is built: the middleware is installed only when tracing is on
    tracing = await startTracing({ serviceName: 'api-test', env: {}, exporter });
    api = await startTestApi();
  });
  afterAll(async () => {
    await api?.close();
    await tracing?.shutdown();
  });

  it('names the span by its route, continues the caller, and stores its context with the webhooks', async () => {
    const party = await buildParty(api.deps, { type: 2 });
    const token = (await login(api, (await buildAccount(api.deps, { partyId: party.id })).email)).accessToken;
    await api.deps.knex('webhook_registrations').insert({
      party_id: party.id,
      bucket: partyBucket(api.deps.knex, party.id),
      target_url: 'http://127.0.0.1:9/hook',
      signing_secret: 'sealed',
    });
    const [registration] = await api.deps
      .knex('webhook_registrations')
      .where({ party_id: party.id })
      .pluck('id');
    await api.deps.knex('webhook_events').insert({
      registration_id: registration,
      bucket: registrationBucket(api.deps.knex, registration),
      entity_name: 'Property',
      type: 1,
    });
    exporter.reset();

    const caller = '0af7651916cd43dd8448eb211c80319c';
    const response = await api.fetch('/api/properties', {
      method: 'POST',
      token,
      headers: { traceparent: `00-${caller}-b7ad6b7169203331-01` },
      json: { name: 'Lindenhof', street: 'Lindenstraße', postalCode: '10969', city: 'Berlin' },
    });
    expect(response.status).toBe(200);
    const span = exporter.getFinishedSpans().find((s) => s.name === 'POST /api/properties');
    expect(span?.spanContext().traceId).toBe(caller);
    expect(span?.parentSpanContext?.spanId).toBe('b7ad6b7169203331');
    expect(span?.attributes).toMatchObject({
      'http.route': '/api/properties',
      'http.response.status_code': 200,
    });
    const [stored] = await api.deps
      .knex('webhooks')
      .where({ registration_id: registration })
      .pluck('trace_context');
    expect(stored).toEqual({ traceparent: `00-${caller}-${span!.spanContext().spanId}-01` });
  });

  it('records the status of a request no route takes', async () => {
    exporter.reset();
    expect((await api.fetch('/api/nothing-here')).status).toBe(404);
    const [span] = exporter.getFinishedSpans();
    expect(span?.name).toBe('GET');
    expect(span?.attributes).toMatchObject({
      'url.path': '/api/nothing-here',
      'http.response.status_code': 404,
    });
    expect(span?.status.code).toBe(0); // a 4xx is not the server's error
  });
});
