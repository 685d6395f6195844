import { describe, expect, it } from 'vitest';
import { WEBHOOK_USER_AGENT } from '@platform/shared';
import { deliveryHeaders, MASK } from './delivery-headers';

const byName = (headers: ReturnType<typeof deliveryHeaders>) =>
  Object.fromEntries(headers.map((h) => [h.name, h]));

describe('delivery headers', () => {
  it('rebuilds the Standard Webhooks headers with the signature masked', () => {
    const headers = byName(
      deliveryHeaders({ webhookId: 42, authType: 0, attemptStartedAt: '2026-11-22T12:00:00.900Z' }),
    );
    expect(Object.keys(headers)).toEqual([
      'content-type',
      'user-agent',
      'webhook-id',
      'webhook-timestamp',
      'webhook-signature',
    ]);
    expect(headers['content-type']!.value).toBe('application/json');
    expect(headers['user-agent']!.value).toBe(WEBHOOK_USER_AGENT);
    expect(headers['webhook-id']!.value).toBe('42');
    expect(headers['webhook-timestamp']!.value).toBe(String(Date.parse('2026-11-22T12:00:00Z') / 1000));
    expect(headers['webhook-signature']).toMatchObject({ value: `v1,${MASK}`, masked: true });
  });

  it('adds the authorization of the registration’s type, masked', () => {
    expect(byName(deliveryHeaders({ webhookId: 1, authType: 1 })).authorization!.value).toBe(`Basic ${MASK}`);
    expect(byName(deliveryHeaders({ webhookId: 1, authType: 2 })).authorization!.value).toBe(
      `Bearer ${MASK}`,
    );
    expect(byName(deliveryHeaders({ webhookId: 1, authType: 4 }))['x-api-key']).toMatchObject({
      value: MASK,
      masked: true,
    });
    // type 3 puts its token in the body, not in a header
    const inBody = byName(deliveryHeaders({ webhookId: 1, authType: 3 }));
    expect(inBody.authorization).toBeUndefined();
    expect(inBody['x-api-key']).toBeUndefined();
  });

  it('never shows a secret value', () => {
    for (const authType of [0, 1, 2, 3, 4, undefined]) {
      for (const header of deliveryHeaders({ webhookId: 1, authType })) {
        if (header.masked) expect(header.value).not.toMatch(/[A-Za-z0-9+/]{8,}/);
      }
    }
  });

  it('says when the registration (and so its authorization) is unknown', () => {
    const headers = byName(deliveryHeaders({ webhookId: 1, authType: undefined }));
    expect(headers.authorization!.value).toBe('(unknown)');
    expect(headers['webhook-timestamp']!.value).toBe('(set at each attempt)');
  });
});
