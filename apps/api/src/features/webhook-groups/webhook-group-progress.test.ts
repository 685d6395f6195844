import { WebhookState, type WebhookGroupProgressRead, type WebhookRead } from '@platform/shared';
import { setWebhookState } from '@platform/testkit';
import { describe, expect, it } from 'vitest';
import { expectProblem, readJson } from '../../../tests/support/http';
import { useTestApi } from '../../../tests/support/api';
import { act, createProperty, patchProperty, register, webhooksOf } from '../../../tests/support/webhooks';

const { Retrying, Successful, Failed, Resolved } = WebhookState;

const { api, world } = useTestApi({ world: true, truncateWebhooks: true });

async function progress(
  query: string,
  token = world.pmc.full.token,
): Promise<{ response: Response; body?: WebhookGroupProgressRead }> {
  const response = await api.fetch(`/api/webhook-groups/progress?${query}`, { token });
  return response.status === 200
    ? { response, body: await readJson<WebhookGroupProgressRead>(response) }
    : { response };
}

describe('GET /api/webhook-groups/progress', () => {
  it('counts a released group exactly, past any page size, and says when it is held again', async () => {
    const token = world.pmc.full.token;
    const registration = await register(api, token, { shouldGroup: true });
    // a webhook of another group before the blocker: never counted
    await createProperty(api, token, 'Elsewhere');
    const propertyId = await createProperty(api, token);
    for (let i = 1; i < 130; i++) await patchProperty(api, token, propertyId, { notes: `change ${i}` });
    const all = await webhooksOf(api, registration.id);
    const hooks = all.filter((w) => w.id !== all[0]!.id).map((w) => w.id);
    expect(hooks).toHaveLength(130);
    await setWebhookState(api.db.knex, all[0]!.id, Successful);
    const groupKey = `Property:${propertyId}`;
    const query = `registrationId=${registration.id}&groupKey=${groupKey}&fromWebhookId=${hooks[0]}`;

    // the head fails and holds 129 webhooks; the operator retries it
    await setWebhookState(api.db.knex, hooks[0]!, Failed);
    expect((await readJson<WebhookRead>(await act(api, token, hooks[0]!, 'retry'))).state).toBe(Retrying);
    expect((await progress(query)).body).toMatchObject({
      registrationId: registration.id,
      groupKey,
      fromWebhookId: hooks[0],
      waiting: 129,
      inDelivery: 1,
      retrying: 0,
      nextRetryAt: null,
      delivered: 0,
      ended: 0,
      heldBy: null,
    });

    // 110 delivered (more than a page of 100), one resolved, then one fails and holds the rest again
    await setWebhookState(api.db.knex, hooks.slice(0, 110), Successful);
    await setWebhookState(api.db.knex, hooks[110]!, Resolved);
    await setWebhookState(api.db.knex, hooks[111]!, Failed);
    expect((await progress(query)).body).toMatchObject({
      waiting: 18,
      inDelivery: 0,
      retrying: 0,
      delivered: 110,
      ended: 1,
      heldBy: hooks[111],
    });

    // the released blocker retried and failed again holds it too
    await setWebhookState(api.db.knex, hooks[111]!, Successful);
    await setWebhookState(api.db.knex, hooks[0]!, Failed);
    expect((await progress(query)).body).toMatchObject({ heldBy: hooks[0], delivered: 110 });
  });

  it('answers 404 for a registration out of scope and 400 naming a bad parameter', async () => {
    const registration = await register(api, world.pmc.full.token, { shouldGroup: true });
    const query = `registrationId=${registration.id}&groupKey=Property:1&fromWebhookId=1`;
    expect((await progress(query, world.otherPmc.full.token)).response.status).toBe(404);
    await expectProblem((await progress(`registrationId=${registration.id}&fromWebhookId=1`)).response, 400, {
      errors: { groupKey: ['Required'] },
    });
    await expectProblem(
      (await progress(`registrationId=${registration.id}&groupKey=Property:1&fromWebhookId=x`)).response,
      400,
      { errors: { fromWebhookId: [expect.stringContaining('whole number')] } },
    );
  });
});
