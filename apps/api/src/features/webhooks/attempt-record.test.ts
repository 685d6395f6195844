import {
  ATTEMPT_SKIP_EXPLANATIONS,
  WebhookAuthType,
  type Page,
  type WebhookAttemptDetailRead,
  type WebhookAttemptRead,
} from '@platform/shared';
import { bodyOf, seedRegistration } from '@platform/testkit';
import { describe, expect, it } from 'vitest';
import { expectProblem, readJson } from '../../../tests/support/http';
import { useTestApi } from '../../../tests/support/api';
import { useDelivery } from '../../../tests/support/delivery';
import { createProperty } from '../../../tests/support/webhooks';

const { api, world } = useTestApi({ world: true });

const PASSWORD = 'hunter2-very-secret';
const LONG_HEADER = 'x'.repeat(900);

// answers 500 with headers of its own, echoing the authorization it got (a debug endpoint)
const delivery = useDelivery(api, (request) => ({
  status: 500,
  headers: {
    'x-receiver': 'test-target',
    'x-echo-authorization': String(request.headers.authorization),
    'x-long-1': LONG_HEADER,
    'x-long-2': LONG_HEADER,
    'x-long-3': LONG_HEADER,
  },
  body: `failed for ${String(request.headers.authorization)}`,
}));

const token = () => world.pmc.full.token;

describe('the full record of an attempt', () => {
  it('keeps the request as sent and the answer, credentials redacted, headers bounded; the body rebuilt', async () => {
    const registration = await seedRegistration(api.db.knex, {
      partyId: world.pmc.id,
      targetUrl: delivery.target.url,
      authType: WebhookAuthType.BasicAuth,
      credentials: { username: 'platform', password: PASSWORD },
    });
    await createProperty(api, token(), 'Recorded House');
    const [webhook] = (await api.db
      .knex('webhooks')
      .where({ registration_id: registration.id })
      .select('id')) as {
      id: string;
    }[];
    const webhookId = Number(webhook!.id);
    await delivery.target.waitForAnswered(webhookId, 1);
    await expect
      .poll(async () => (await api.db.knex('webhook_attempts').where({ webhook_id: webhookId })).length)
      .toBeGreaterThan(0);

    const page = await readJson<Page<WebhookAttemptRead>>(
      await api.fetch(`/api/webhooks/${webhookId}/attempts`, { token: token() }),
    );
    const first = page.items.at(-1)!;
    expect(first).toMatchObject({ number: 1, statusCode: 500, sentRequest: true, skipReason: null });
    const received = delivery.target.requestsFor(webhookId)[0]!;
    expect(first.request!.url).toBe(delivery.target.url);
    expect(first.request!.headers).toMatchObject({
      'content-type': 'application/json',
      'webhook-id': String(webhookId),
      'webhook-timestamp': received.headers['webhook-timestamp'],
      // a signature with the body is a message the receiver accepts: not kept
      'webhook-signature': 'v1,[redacted]',
      authorization: 'Basic [redacted]',
    });
    expect(first.responseHeaders).toMatchObject({
      'x-receiver': 'test-target',
      'x-echo-authorization': 'Basic [redacted]',
    });
    // bounded: 2 KiB of headers, the rest left out whole
    const kept = Object.entries(first.responseHeaders!);
    expect(kept.reduce((size, [name, value]) => size + name.length + value.length, 0)).toBeLessThanOrEqual(
      2048,
    );
    expect(kept.filter(([name]) => name.startsWith('x-long-')).length).toBeLessThan(3);
    expect(first.responseBody).toBe('failed for Basic [redacted]');
    expect(JSON.stringify(page)).not.toContain(PASSWORD);
    expect(JSON.stringify(page)).not.toContain(String(received.headers['webhook-signature']).slice(3));

    const detail = await readJson<WebhookAttemptDetailRead>(
      await api.fetch(`/api/webhooks/${webhookId}/attempts/${first.id}`, { token: token() }),
    );
    expect(detail).toMatchObject({ ...first, requestBody: bodyOf(received) });
    expect(detail.durationMs).toBeGreaterThanOrEqual(0);
    // the body is not stored again with the attempt
    const stored = await api.db.knex('webhook_attempts').where({ id: first.id }).first();
    expect(JSON.stringify(stored)).not.toContain('Recorded House');

    await expectProblem(
      await api.fetch(`/api/webhooks/${webhookId}/attempts/999999999`, { token: token() }),
      404,
    );
    await expectProblem(
      await api.fetch(`/api/webhooks/${webhookId}/attempts/${first.id}`, {
        token: world.otherPmc.full.token,
      }),
      404,
    );
    await api.db.knex('webhook_registrations').where({ id: registration.id }).update({ deleted: new Date() });
  });

  it('says why a skip sent nothing, and shows no request for it', async () => {
    const registration = await seedRegistration(api.db.knex, {
      partyId: world.pmc.id,
      targetUrl: delivery.target.url,
    });
    await createProperty(api, token(), 'Skipped House');
    const [webhook] = (await api.db
      .knex('webhooks')
      .where({ registration_id: registration.id })
      .select('id')) as {
      id: string;
    }[];
    const webhookId = Number(webhook!.id);
    // recorded as the loop records an open breaker's turn (outcomeWithoutRequest: nothing sent)
    const [skip] = (await api.db
      .knex('webhook_attempts')
      .insert({
        webhook_id: webhookId,
        number: 2,
        started_at: new Date(),
        duration_ms: 0,
        error_kind: 'circuit-open',
      })
      .returning('id')) as { id: string }[];
    const detail = await readJson<WebhookAttemptDetailRead>(
      await api.fetch(`/api/webhooks/${webhookId}/attempts/${skip!.id}`, { token: token() }),
    );
    expect(detail).toMatchObject({
      errorKind: 'circuit-open',
      sentRequest: false,
      skipReason: ATTEMPT_SKIP_EXPLANATIONS['circuit-open'],
      request: null,
      responseHeaders: null,
      requestBody: null,
      durationMs: 0,
    });
    await api.db.knex('webhook_registrations').where({ id: registration.id }).update({ deleted: new Date() });
  });
});
