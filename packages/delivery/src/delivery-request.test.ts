import { randomBytes } from 'node:crypto';
import { createSecretBox } from '@platform/crypto';
import { WebhookAuthType } from '@platform/shared';
import { Webhook } from 'standardwebhooks';
import { describe, expect, it } from 'vitest';
import { buildDeliveryRequest, type DeliveryMessage } from './delivery-request';

const secrets = createSecretBox(randomBytes(32));
const newSecret = `whsec_${randomBytes(32).toString('base64')}`;
const oldSecret = `whsec_${randomBytes(32).toString('base64')}`;

const message = (overrides: Partial<DeliveryMessage> = {}): DeliveryMessage => ({
  id: 42,
  registration_id: 7,
  registration_party_id: 3,
  target_url: 'https://hooks.example.com/in',
  auth_type: WebhookAuthType.NoAuth,
  auth_credentials: null,
  signing_secret: secrets.seal(newSecret),
  previous_signing_secret: null,
  entity: { id: 1 },
  initiator_party_id: 3,
  initiator_account_id: null,
  event_id: 9,
  event_type: 1,
  event_entity_name: 'Property',
  event_created: '2026-11-01T00:00:00.000Z',
  event_last_modified: null,
  event_deleted: null,
  ...overrides,
});

const build = (overrides: Partial<DeliveryMessage> = {}) =>
  buildDeliveryRequest(message(overrides), {
    secrets,
    bearerToken: () => Promise.reject(new Error('no bearer token here')),
    now: () => new Date(),
  });

const verifies = (secret: string, request: { headers: Record<string, string>; body: string }) => {
  try {
    new Webhook(secret).verify(request.body, request.headers);
    return true;
  } catch {
    return false;
  }
};

describe('the webhook-signature header', () => {
  it('carries one signature with the current secret when there is no previous one', async () => {
    const request = await build();
    expect(request.headers['webhook-signature']).toMatch(/^v1,[A-Za-z0-9+/=]+$/);
    expect(verifies(newSecret, request)).toBe(true);
    expect(verifies(oldSecret, request)).toBe(false);
  });

  it('carries the current and the previous secret’s signatures, space separated, during an overlap', async () => {
    const request = await build({ previous_signing_secret: secrets.seal(oldSecret) });
    const signatures = request.headers['webhook-signature']!.split(' ');
    expect(signatures).toHaveLength(2);
    expect(signatures.every((signature) => signature.startsWith('v1,'))).toBe(true);
    expect(verifies(newSecret, request)).toBe(true);
    expect(verifies(oldSecret, request)).toBe(true);
    expect(verifies(`whsec_${randomBytes(32).toString('base64')}`, request)).toBe(false);
  });

  it('uses a string message id as it is', async () => {
    const request = await build({ id: 'test_abc' });
    expect(request.headers['webhook-id']).toBe('test_abc');
    expect(verifies(newSecret, request)).toBe(true);
  });
});
