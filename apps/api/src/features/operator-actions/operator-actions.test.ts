import { WebhookState, type OperatorActionRead, type Page, type WebhookDetailRead } from '@platform/shared';
import { setWebhookState } from '@platform/testkit';
import { describe, expect, it } from 'vitest';
import { expectProblem, readJson } from '../../../tests/support/http';
import { expectAccessRules, useTestApi } from '../../../tests/support/api';
import { act, createProperty, patchProperty, register, webhooksOf } from '../../../tests/support/webhooks';

const { Aborted, Failed } = WebhookState;

// truncating the webhook tables cascades to operator_actions, which reference registrations
const { api, world } = useTestApi({ world: true, truncateWebhooks: true });

const trail = async (token: string, query = '') =>
  readJson<Page<OperatorActionRead>>(await api.fetch(`/api/operator-actions${query}`, { token }));

/** A registration of `owner` (registered by the Admin) with three webhooks of one property. */
async function threeWebhooks(ownerPartyId: number, changerToken: string) {
  const registration = await register(api, world.admin.full.token, { partyId: ownerPartyId });
  // these tests are about actions on webhooks: the create's own entry is setup
  await api.db.knex('operator_actions').where({ registration_id: registration.id }).del();
  const propertyId = await createProperty(api, changerToken);
  await patchProperty(api, changerToken, propertyId, { notes: 'one' });
  await patchProperty(api, changerToken, propertyId, { notes: 'two' });
  const hooks = (await webhooksOf(api, registration.id)).map((w) => w.id);
  expect(hooks).toHaveLength(3);
  return { registration, hooks };
}

describe('the audit trail (GET /api/operator-actions)', () => {
  it('lists single aborts, resolves and retries, newest first, with account, webhook and registration', async () => {
    const pmc = world.pmc.full;
    const { registration, hooks } = await threeWebhooks(world.pmc.id, pmc.token);
    const [first, second, third] = hooks as [number, number, number];
    expect((await act(api, pmc.token, first, 'abort')).status).toBe(200);
    expect((await act(api, pmc.token, second, 'resolve')).status).toBe(200);
    await setWebhookState(api.db.knex, third, Failed);
    expect((await act(api, pmc.token, third, 'retry')).status).toBe(200);
    // a refused action (first is final now) writes no audit row: it rolled back with the action
    expect((await act(api, pmc.token, first, 'abort')).status).toBe(409);

    const page = await trail(pmc.token);
    const entry = (action: OperatorActionRead['action'], webhookId: number) => ({
      id: expect.any(Number),
      action,
      accountId: pmc.id,
      accountEmail: pmc.email,
      partyId: world.pmc.id,
      registrationId: registration.id,
      webhookId,
      operationId: null,
      filter: null,
      dryRun: false,
      changed: 1,
      detail: {},
      created: expect.any(String),
    });
    expect(page).toEqual({
      items: [entry('webhook.retry', third), entry('webhook.resolve', second), entry('webhook.abort', first)],
      pageNumber: 1,
      pageSize: 20,
      totalCount: 3,
      totalPages: 1,
      hasPreviousPage: false,
      hasNextPage: false,
    });
    const ids = page.items.map((item) => item.id);
    expect(ids).toEqual([...ids].sort((a, b) => b - a));

    // paged like every list
    const second2 = await trail(pmc.token, '?PageSize=2&PageNumber=2');
    expect(second2.items.map((item) => item.action)).toEqual(['webhook.abort']);
    expect(second2).toMatchObject({
      totalCount: 3,
      totalPages: 2,
      hasPreviousPage: true,
      hasNextPage: false,
    });
  });

  it('filters by account, action and registration', async () => {
    const pmc = world.pmc.full;
    const one = await threeWebhooks(world.pmc.id, pmc.token);
    const two = await threeWebhooks(world.pmc.id, pmc.token);
    await act(api, pmc.token, one.hooks[0]!, 'abort');
    await act(api, world.admin.full.token, one.hooks[1]!, 'resolve');
    await act(api, pmc.token, two.hooks[0]!, 'abort');

    const actions = async (query: string) =>
      (await trail(world.admin.full.token, query)).items.map((item) => [item.action, item.webhookId]);
    expect(await actions(`?accountId=${pmc.id}`)).toEqual([
      ['webhook.abort', two.hooks[0]],
      ['webhook.abort', one.hooks[0]],
    ]);
    expect(await actions(`?accountId=${world.admin.full.id}`)).toEqual([['webhook.resolve', one.hooks[1]]]);
    expect(await actions('?action=webhook.resolve')).toEqual([['webhook.resolve', one.hooks[1]]]);
    expect(await actions(`?registrationId=${two.registration.id}`)).toEqual([
      ['webhook.abort', two.hooks[0]],
    ]);
    expect(await actions(`?registrationId=${one.registration.id}&action=webhook.abort`)).toEqual([
      ['webhook.abort', one.hooks[0]],
    ]);
    // query names match case-insensitively, like every list's
    expect(await actions(`?AccountId=${world.admin.full.id}`)).toEqual([['webhook.resolve', one.hooks[1]]]);
    expect(await actions('?action=registration.replay')).toEqual([]);
  });

  it('shows a party its own actions and those on its registrations, never another party’s', async () => {
    const mine = await threeWebhooks(world.pmc.id, world.pmc.full.token);
    const theirs = await threeWebhooks(world.otherPmc.id, world.otherPmc.full.token);
    await act(api, world.pmc.full.token, mine.hooks[0]!, 'abort');
    await act(api, world.otherPmc.full.token, theirs.hooks[0]!, 'abort');
    // platform support acting on each registration
    await act(api, world.admin.full.token, mine.hooks[1]!, 'abort');
    await act(api, world.admin.full.token, theirs.hooks[1]!, 'abort');

    const seen = async (token: string) =>
      (await trail(token)).items.map((item) => item.webhookId).sort((a, b) => a! - b!);
    expect(await seen(world.pmc.full.token)).toEqual([mine.hooks[0], mine.hooks[1]]);
    expect(await seen(world.otherPmc.full.token)).toEqual([theirs.hooks[0], theirs.hooks[1]]);
    expect(await seen(world.admin.full.token)).toEqual([
      ...mine.hooks.slice(0, 2),
      ...theirs.hooks.slice(0, 2),
    ]);
    // filtering by another party's registration finds nothing rather than leaking it
    expect((await trail(world.pmc.full.token, `?registrationId=${theirs.registration.id}`)).items).toEqual(
      [],
    );
  });

  it('refuses bad filters with 400 naming them', async () => {
    const token = world.pmc.full.token;
    await expectProblem(await api.fetch('/api/operator-actions?action=webhook.delete', { token }), 400, {
      errors: { action: [expect.stringMatching(/^action must be one of webhook\.abort, /)] },
    });
    await expectProblem(await api.fetch('/api/operator-actions?accountId=abc', { token }), 400, {
      errors: { accountId: ['accountId must be a whole number'] },
    });
    await expectProblem(await api.fetch('/api/operator-actions?registrationId=0', { token }), 400, {
      errors: { registrationId: ['registrationId must be at least 1'] },
    });
    await expectProblem(await api.fetch('/api/operator-actions?PageSize=101', { token }), 400);
    await expectProblem(await api.fetch('/api/operator-actions?webhookId=1', { token }), 400);
  });

  it('applies the access rules: Admin and PMC with Webhook.Read, everyone else 403', async () => {
    await expectAccessRules(api, world, {
      method: 'GET',
      path: '/api/operator-actions',
      allow: [1, 2],
      permission: 'Webhook.Read',
    });
  });

  it('shows on a webhook’s read who last acted on it', async () => {
    const { hooks } = await threeWebhooks(world.pmc.id, world.pmc.full.token);
    const before = await readJson<WebhookDetailRead>(
      await api.fetch(`/api/webhooks/${hooks[0]}`, { token: world.pmc.full.token }),
    );
    expect(before.lastAction).toBeNull();
    expect((await act(api, world.admin.full.token, hooks[0]!, 'abort')).status).toBe(200);

    const [audit] = (await trail(world.pmc.full.token)).items;
    // platform support's account is another party's: shown by id, its email kept from the PMC
    expect(audit).toMatchObject({ accountId: world.admin.full.id, accountEmail: null });
    const [seenByAdmin] = (await trail(world.admin.full.token)).items;
    expect(seenByAdmin).toMatchObject({
      accountId: world.admin.full.id,
      accountEmail: world.admin.full.email,
    });
    const after = await readJson<WebhookDetailRead>(
      await api.fetch(`/api/webhooks/${hooks[0]}`, { token: world.pmc.full.token }),
    );
    expect(after.state).toBe(Aborted);
    expect(after.lastAction).toEqual({
      id: audit!.id,
      action: 'webhook.abort',
      accountId: world.admin.full.id,
      // platform support is another party's: its email stays hidden from the PMC, as in the trail
      accountEmail: null,
      at: audit!.created,
    });
  });
});
