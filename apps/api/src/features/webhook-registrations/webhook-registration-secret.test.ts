import { randomBytes } from 'node:crypto';
import type { RotateSecretResult, WebhookRegistrationCreated } from '@platform/shared';
import {
  eventually,
  startDispatcher,
  startTestTarget,
  type DispatcherProcess,
  type ReceivedRequest,
  type TestTarget,
} from '@platform/testkit';
import { Webhook } from 'standardwebhooks';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { expectProblem, readJson } from '../../../tests/support/http';
import { buildAccount, buildParty, expectAccessRules, login, useTestApi } from '../../../tests/support/api';
import {
  auditExceptLifecycle,
  createProperty,
  patchProperty,
  register,
} from '../../../tests/support/webhooks';

// POST /api/webhook-registrations/{id}/rotate-secret, and the signatures the real dispatcher
// process sends during and after the overlap, checked with the `standardwebhooks` library.

/** The dispatcher opens what the API sealed: both get this key. */
const SECRET_KEY = randomBytes(32).toString('base64');

const { api, world } = useTestApi({ world: true, config: { SECRET_ENCRYPTION_KEY: SECRET_KEY } });

beforeEach(async () => {
  await auditExceptLifecycle(api).del();
});

async function rotate(id: number, body?: unknown, token = world.pmc.full.token): Promise<RotateSecretResult> {
  const response = await api.fetch(`/api/webhook-registrations/${id}/rotate-secret`, {
    method: 'POST',
    token,
    ...(body === undefined ? {} : { json: body }),
  });
  return readJson<RotateSecretResult>(response);
}

const secretsOf = async (id: number) => {
  const row = await api.db.knex('webhook_registrations').where({ id }).first();
  return {
    current: api.deps.secrets.open(row.signing_secret),
    previous: row.previous_signing_secret ? api.deps.secrets.open(row.previous_signing_secret) : null,
    expiresAt: row.previous_secret_expires_at as Date | null,
    sealed: [row.signing_secret, row.previous_signing_secret] as (string | null)[],
    lastModified: row.last_modified as Date,
  };
};

const SECRET_FORMAT = /^whsec_[A-Za-z0-9+/]{43}=$/;

describe('POST /api/webhook-registrations/{id}/rotate-secret', () => {
  it('answers a new secret once, keeps the old one for 24 hours by default, and audits it without secrets', async () => {
    const created = await register(api, world.pmc.full.token);
    expect(created.signingSecret).toMatch(SECRET_FORMAT);
    const rotated = await rotate(created.id);
    const expiresAt = new Date(api.clock.now().getTime() + 24 * 3_600_000).toISOString();
    expect(rotated).toEqual({
      signingSecret: expect.stringMatching(SECRET_FORMAT),
      previousSecretExpiresAt: expiresAt,
    });
    expect(rotated.signingSecret).not.toBe(created.signingSecret);

    const stored = await secretsOf(created.id);
    expect(stored).toMatchObject({ current: rotated.signingSecret, previous: created.signingSecret });
    expect(stored.expiresAt!.toISOString()).toBe(expiresAt);
    expect(stored.lastModified.toISOString()).toBe(api.clock.now().toISOString());
    // sealed at rest, like the secret of a creation
    for (const sealed of stored.sealed) {
      expect(sealed).not.toContain(created.signingSecret.slice(6));
      expect(sealed).not.toContain(rotated.signingSecret.slice(6));
    }
    // never shown again
    const read = await api.fetch(`/api/webhook-registrations/${created.id}`, { token: world.pmc.full.token });
    expect(await read.text()).not.toContain('whsec_');

    const audit = await auditExceptLifecycle(api);
    expect(audit).toEqual([
      expect.objectContaining({
        action: 'registration.rotate-secret',
        account_id: world.pmc.full.id,
        registration_id: created.id,
        changed: 1,
        detail: { overlap: '24h', previousSecretExpiresAt: expiresAt },
      }),
    ]);
    expect(JSON.stringify(audit)).not.toContain('whsec_');
  });

  it('takes an overlap up to 7 days, or none at all', async () => {
    const created = await register(api, world.pmc.full.token);
    const week = await rotate(created.id, { overlap: '7d' });
    expect(week.previousSecretExpiresAt).toBe(
      new Date(api.clock.now().getTime() + 7 * 86_400_000).toISOString(),
    );
    // a second rotation during the overlap: the secret it replaces is the previous one now
    const again = await rotate(created.id, { overlap: '30m' });
    expect(await secretsOf(created.id)).toMatchObject({
      current: again.signingSecret,
      previous: week.signingSecret,
    });

    const none = await rotate(created.id, { overlap: '0m' });
    expect(none.previousSecretExpiresAt).toBeNull();
    expect(await secretsOf(created.id)).toMatchObject({
      current: none.signingSecret,
      previous: null,
      expiresAt: null,
    });
    expect((await auditExceptLifecycle(api).orderBy('id')).map((row) => row.detail.overlap)).toEqual([
      '7d',
      '30m',
      '0m',
    ]);
  });

  it('refuses an overlap it cannot read or longer than 7 days, and changes nothing', async () => {
    const created = await register(api, world.pmc.full.token);
    for (const [overlap, message] of [
      ['8d', 'overlap must be at most 7 days'],
      ['169h', 'overlap must be at most 7 days'],
      ['24 h', 'overlap must be a duration like 30m, 24h or 7d'],
      ['1w', 'overlap must be a duration like 30m, 24h or 7d'],
    ] as const) {
      const problem = await expectProblem(
        await api.fetch(`/api/webhook-registrations/${created.id}/rotate-secret`, {
          method: 'POST',
          token: world.pmc.full.token,
          json: { overlap },
        }),
        400,
      );
      expect(problem.errors?.overlap).toContain(message);
    }
    expect(await secretsOf(created.id)).toMatchObject({ current: created.signingSecret, previous: null });
    expect(await auditExceptLifecycle(api)).toEqual([]);
  });

  it('answers 404 for another party’s, a deleted or an unknown registration, and changes nothing', async () => {
    const foreign = await register(api, world.otherPmc.full.token);
    const deleted = await register(api, world.pmc.full.token);
    expect(
      (
        await api.fetch(`/api/webhook-registrations/${deleted.id}`, {
          method: 'DELETE',
          token: world.pmc.full.token,
        })
      ).status,
    ).toBe(204);
    for (const id of [foreign.id, deleted.id, 999_999]) {
      await expectProblem(
        await api.fetch(`/api/webhook-registrations/${id}/rotate-secret`, {
          method: 'POST',
          token: world.pmc.full.token,
        }),
        404,
      );
    }
    expect(await secretsOf(foreign.id)).toMatchObject({ current: foreign.signingSecret, previous: null });
    expect(await auditExceptLifecycle(api)).toEqual([]);
    // an Admin sees every party's registrations
    await rotate(foreign.id, undefined, world.admin.full.token);
  });

  it('needs Webhook.Update', async () => {
    const created = await register(api, world.pmc.full.token);
    const registrar = await buildAccount(api.deps, {
      partyId: world.pmc.id,
      permissions: ['WebhookRegistration.Read', 'WebhookRegistration.Update', 'Webhook.Read'],
    });
    const { accessToken } = await login(api, registrar.email);
    await expectProblem(
      await api.fetch(`/api/webhook-registrations/${created.id}/rotate-secret`, {
        method: 'POST',
        token: accessToken,
      }),
      403,
    );
    expect(await secretsOf(created.id)).toMatchObject({ current: created.signingSecret });

    const inScope = async (caller: { type: number; full: { token: string } }) =>
      caller.type === 1 || caller.type === 2 ? (await register(api, caller.full.token)).id : created.id;
    await expectAccessRules(api, world, {
      method: 'POST',
      path: async (caller) => `/api/webhook-registrations/${await inScope(caller)}/rotate-secret`,
      body: { overlap: '1h' },
      allow: [1, 2],
      permission: 'Webhook.Update',
    });
  });
});

describe('deliveries of the real dispatcher around a rotation', () => {
  let dispatcher: DispatcherProcess;
  let target: TestTarget;
  let token: string;
  let registration: WebhookRegistrationCreated;
  let propertyId: number | undefined;

  beforeAll(async () => {
    target = await startTestTarget();
    const party = await buildParty(api.deps, { type: 2 });
    token = (await login(api, (await buildAccount(api.deps, { partyId: party.id })).email)).accessToken;
    registration = await register(api, token, { targetUrl: target.url });
    dispatcher = await startDispatcher(api.db.url, { LOG_LEVEL: 'warn', SECRET_ENCRYPTION_KEY: SECRET_KEY });
  }, 60_000);
  afterAll(async () => {
    if (dispatcher) expect(await dispatcher.stop()).toBe(0);
    await target?.close();
  });

  /** Makes one change of the party and answers the delivery the target received for it. */
  async function nextDelivery(): Promise<ReceivedRequest> {
    const before = target.requests.length;
    if (propertyId === undefined) propertyId = await createProperty(api, token, 'Rotated');
    else await patchProperty(api, token, propertyId, { name: `Rotated ${before}` });
    await eventually(() => target.requests.length > before, { what: 'the next delivery' });
    return target.requests[before]!;
  }

  const verifies = (secret: string, request: ReceivedRequest) => {
    try {
      new Webhook(secret).verify(request.body, request.headers as Record<string, string>);
      return true;
    } catch {
      return false;
    }
  };
  const signatures = (request: ReceivedRequest) => String(request.headers['webhook-signature']).split(' ');

  it('signs with the new and the old secret during the overlap, and with the new one only after it', async () => {
    const before = await nextDelivery();
    expect(signatures(before)).toHaveLength(1);
    expect(verifies(registration.signingSecret, before)).toBe(true);

    const { signingSecret } = await rotate(registration.id, { overlap: '1h' }, token);
    const during = await nextDelivery();
    expect(signatures(during)).toHaveLength(2);
    expect(verifies(signingSecret, during)).toBe(true);
    expect(verifies(registration.signingSecret, during)).toBe(true);
    expect(verifies(`whsec_${randomBytes(32).toString('base64')}`, during)).toBe(false);

    // the overlap ends (set in the past rather than waited for)
    await api.db
      .knex('webhook_registrations')
      .where({ id: registration.id })
      .update({ previous_secret_expires_at: new Date(Date.now() - 1000) });
    const after = await nextDelivery();
    expect(signatures(after)).toHaveLength(1);
    expect(verifies(signingSecret, after)).toBe(true);
    expect(verifies(registration.signingSecret, after)).toBe(false);

    // no overlap at all: the old secret stops at once
    const { signingSecret: third } = await rotate(registration.id, { overlap: '0m' }, token);
    const cut = await nextDelivery();
    expect(signatures(cut)).toHaveLength(1);
    expect(verifies(third, cut)).toBe(true);
    expect(verifies(signingSecret, cut)).toBe(false);
  });
});
