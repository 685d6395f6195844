import { PartyType, type OperatorActionRead, type WebhookNotificationSettingsRead } from '@platform/shared';
import { describe, expect, it } from 'vitest';
import { expectAccessRules, useTestApi } from '../../../tests/support/api';
import { expectProblem, readJson } from '../../../tests/support/http';

// Notifications to operators (docs/admin.md#notifications): the per-party settings route. What
// the settings do (mails, the operator webhook) is apps/dispatcher/src/operator-notifications.test.ts.

const { api, world } = useTestApi({ world: true, truncateWebhooks: true });

const path = (partyId: number) => `/api/webhook-notifications/${partyId}`;
const put = (token: string, partyId: number, json: unknown) =>
  api.fetch(path(partyId), { method: 'PUT', token, json });
const read = async (token: string, partyId: number) =>
  readJson<WebhookNotificationSettingsRead>(await api.fetch(path(partyId), { token }));

describe('GET and PUT /api/webhook-notifications/{partyId}', () => {
  it('answers the defaults, then what was set; the secret once; audited', async () => {
    const before = await read(world.pmc.full.token, world.pmc.id);
    // by default the party's accounts holding a Webhook permission are mailed
    expect(before).toMatchObject({
      partyId: world.pmc.id,
      emails: null,
      webhookUrl: null,
      lastModified: null,
    });
    expect(before.breakerOpenMinutes).toBe(15);
    expect(before.recipients).toContain(world.pmc.full.email);
    expect(before.recipients).not.toContain(world.pmc.bare.email);

    const set = await readJson<WebhookNotificationSettingsRead>(
      await put(world.pmc.full.token, world.pmc.id, {
        emails: ['Ops@Example.com', 'ops@example.com', 'oncall@example.com'],
        webhookUrl: 'https://hooks.example.com/ops',
        breakerOpenMinutes: 30,
      }),
    );
    expect(set).toMatchObject({
      emails: ['ops@example.com', 'oncall@example.com'],
      recipients: ['oncall@example.com', 'ops@example.com'],
      webhookUrl: 'https://hooks.example.com/ops',
      breakerOpenMinutes: 30,
    });
    expect(set.signingSecret).toMatch(/^whsec_/);
    const again = await read(world.pmc.full.token, world.pmc.id);
    expect(again.signingSecret).toBeUndefined();
    expect(again.lastModified).not.toBeNull();
    // a new URL keeps the secret: not answered again
    const moved = await readJson<WebhookNotificationSettingsRead>(
      await put(world.pmc.full.token, world.pmc.id, {
        emails: [],
        webhookUrl: 'https://hooks.example.com/ops2',
      }),
    );
    expect(moved).toMatchObject({ emails: [], recipients: [], breakerOpenMinutes: 15 });
    expect(moved.signingSecret).toBeUndefined();
    // no webhook: the secret goes; a URL set later gets a new one
    await readJson(await put(world.pmc.full.token, world.pmc.id, { emails: null, webhookUrl: null }));
    const stored = await api.deps
      .knex('webhook_notification_settings')
      .where({ party_id: world.pmc.id })
      .first();
    expect(stored).toMatchObject({ webhook_url: null, webhook_secret: null });
    const renewed = await readJson<WebhookNotificationSettingsRead>(
      await put(world.pmc.full.token, world.pmc.id, {
        emails: null,
        webhookUrl: 'https://hooks.example.com/x',
      }),
    );
    expect(renewed.signingSecret).toMatch(/^whsec_/);
    expect(renewed.signingSecret).not.toBe(set.signingSecret);
    // sealed at rest
    const sealed = await api.deps
      .knex('webhook_notification_settings')
      .where({ party_id: world.pmc.id })
      .first();
    expect(sealed.webhook_secret).not.toContain(renewed.signingSecret!.slice(6));

    const audit = await readJson<{ items: OperatorActionRead[] }>(
      await api.fetch('/api/operator-actions?action=notifications.update', { token: world.admin.full.token }),
    );
    expect(audit.items).toHaveLength(4);
    expect(audit.items.at(-1)).toMatchObject({
      accountId: world.pmc.full.id,
      detail: { partyId: world.pmc.id, webhookUrl: 'https://hooks.example.com/ops', newSigningSecret: true },
    });
  });

  it('refuses bad input with a 400 naming the field', async () => {
    const bad = async (body: unknown, field: string, message: string | RegExp) => {
      const problem = await expectProblem(await put(world.pmc.full.token, world.pmc.id, body), 400);
      const errors = (problem as { errors: Record<string, string[]> }).errors;
      expect(Object.keys(errors)).toEqual([field]);
      expect(errors[field]!.join(' ')).toMatch(message);
    };
    await bad({ emails: ['not-an-address'], webhookUrl: null }, 'emails.0', 'must be an email address');
    await bad({ emails: null, webhookUrl: 'ftp://x.example.com' }, 'webhookUrl', /http/);
    await bad({ emails: null, webhookUrl: null, breakerOpenMinutes: 0 }, 'breakerOpenMinutes', 'at least 1');
    await bad(
      { emails: null, webhookUrl: null, breakerOpenMinutes: 2000 },
      'breakerOpenMinutes',
      'at most 1440',
    );
    await bad({ emails: null, webhookUrl: null, surprise: 1 }, 'surprise', /.+/);
    await bad({ webhookUrl: null }, 'emails', /.+/);
    await bad(
      { emails: Array.from({ length: 21 }, (_, i) => `a${i}@example.com`), webhookUrl: null },
      'emails',
      'at most 20',
    );
  });

  it('is for Admin (any party) and a PMC (its own and managed parties) with the Webhook permissions; another party is a 404', async () => {
    const body = { emails: null, webhookUrl: null };
    await expectAccessRules(api, world, {
      method: 'GET',
      path: (caller) => path(caller.id),
      allow: [PartyType.Admin, PartyType.PropertyManagementCompany],
      permission: 'Webhook.Read',
    });
    await expectAccessRules(api, world, {
      method: 'PUT',
      path: (caller) => path(caller.id),
      body,
      allow: [PartyType.Admin, PartyType.PropertyManagementCompany],
      permission: 'Webhook.Update',
    });
    await readJson(await put(world.admin.full.token, world.otherPmc.id, body));
    await readJson(await put(world.pmc.full.token, world.contractor.id, body));
    await expectProblem(await put(world.pmc.full.token, world.otherPmc.id, body), 404, {
      detail: `Party ${world.otherPmc.id} was not found`,
    });
    await expectProblem(await api.fetch(path(world.otherPmc.id), { token: world.pmc.full.token }), 404);
    await expectProblem(await api.fetch(path(999999), { token: world.admin.full.token }), 404);
    await expectProblem(
      await api.fetch('/api/webhook-notifications/abc', { token: world.admin.full.token }),
      400,
    );
  });
});
