import { WebhookState, type OperatorActionRead, type Page, type WebhookRead } from '@platform/shared';
import { describe, expect, it } from 'vitest';
import { readJson } from '../../../tests/support/http';
import { useTestApi } from '../../../tests/support/api';
import { createProperty, register, webhooksOf } from '../../../tests/support/webhooks';

const { Aborted } = WebhookState;

const { api, world } = useTestApi({ world: true, truncateWebhooks: true });

async function trail(registrationId: number, token = world.pmc.full.token): Promise<OperatorActionRead[]> {
  const page = await readJson<Page<OperatorActionRead>>(
    await api.fetch(`/api/operator-actions?registrationId=${registrationId}`, { token }),
  );
  return page.items;
}

describe('the audit trail of registrations', () => {
  it('records a create, a target URL change and a delete with what it aborted', async () => {
    const token = world.pmc.full.token;
    const created = await register(api, token, { targetUrl: 'https://hooks.example.com/first' });
    expect(await trail(created.id)).toEqual([
      expect.objectContaining({
        action: 'registration.create',
        accountId: world.pmc.full.id,
        partyId: world.pmc.id,
        registrationId: created.id,
        changed: 1,
        detail: { targetUrl: 'https://hooks.example.com/first', partyId: world.pmc.id },
      }),
    ]);

    const patched = await api.fetch(`/api/webhook-registrations/${created.id}`, {
      method: 'PATCH',
      token,
      json: { targetUrl: 'https://hooks.example.com/second' },
    });
    expect(patched.status).toBe(200);
    expect((await trail(created.id))[0]).toMatchObject({
      action: 'registration.update-target',
      changed: 1,
      detail: {
        previousTargetUrl: 'https://hooks.example.com/first',
        targetUrl: 'https://hooks.example.com/second',
      },
    });

    // three undelivered webhooks, aborted by the delete: the entry says so, and each names it
    for (const name of ['a', 'b', 'c']) await createProperty(api, token, name);
    expect(await webhooksOf(api, created.id)).toHaveLength(3);
    expect(
      (await api.fetch(`/api/webhook-registrations/${created.id}`, { method: 'DELETE', token })).status,
    ).toBe(204);
    const [deleted] = await trail(created.id);
    expect(deleted).toMatchObject({
      action: 'registration.delete',
      accountId: world.pmc.full.id,
      changed: 3,
      detail: { targetUrl: 'https://hooks.example.com/second' },
    });
    const webhooks = await readJson<Page<WebhookRead>>(
      await api.fetch(`/api/webhooks?registrationId=${created.id}`, { token }),
    );
    expect(webhooks.items.map((w) => [w.state, w.lastAction?.action, w.lastAction?.id])).toEqual(
      Array.from({ length: 3 }, () => [Aborted, 'registration.delete', deleted!.id]),
    );
    // filtered by action, and invisible to another party
    const deletes = await readJson<Page<OperatorActionRead>>(
      await api.fetch('/api/operator-actions?action=registration.delete', { token }),
    );
    expect(deletes.items.map((a) => a.registrationId)).toEqual([created.id]);
    expect(await trail(created.id, world.otherPmc.full.token)).toEqual([]);
  });

  it('records nothing for a refused create', async () => {
    const before = await api.db.knex('operator_actions').count({ n: '*' }).first();
    const refused = await api.fetch('/api/webhook-registrations', {
      method: 'POST',
      token: world.pmc.full.token,
      json: { targetUrl: 'not a url', enabledEvents: [] },
    });
    expect(refused.status).toBe(400);
    expect(await api.db.knex('operator_actions').count({ n: '*' }).first()).toEqual(before);
  });
});
