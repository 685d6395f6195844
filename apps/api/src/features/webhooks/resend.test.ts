import { WebhookState, type OperatorActionRead, type Page, type WebhookRead } from '@platform/shared';
import { seedRegistration, setWebhookState, waitForWebhook } from '@platform/testkit';
import { describe, expect, it } from 'vitest';
import { expectProblem, readJson } from '../../../tests/support/http';
import { expectAccessRules, useTestApi } from '../../../tests/support/api';
import { onlyDelivery, useDelivery } from '../../../tests/support/delivery';
import { createProperty, patchProperty, webhooksOf } from '../../../tests/support/webhooks';

const { Successful, Aborted } = WebhookState;

const { api, world } = useTestApi({ world: true });
const delivery = useDelivery(api);

const token = () => world.pmc.full.token;
const resend = (id: number, as = token()) =>
  api.fetch(`/api/webhooks/${id}/resend`, { method: 'POST', token: as });

/** The one request the target received for `webhookId`, raw. */
const deliveredText = (webhookId: number): string => onlyDelivery(delivery.target, webhookId).body;

async function registration(shouldGroup: boolean): Promise<number> {
  return (
    await seedRegistration(api.db.knex, {
      partyId: world.pmc.id,
      targetUrl: delivery.target.url,
      shouldGroup,
    })
  ).id;
}

describe('resend (POST /api/webhooks/{id}/resend)', () => {
  it('delivers the same body again as a new webhook, audited as webhook.resend', async () => {
    const registrationId = await registration(false);
    await createProperty(api, token(), 'Resend House');
    const [original] = await webhooksOf(api, registrationId);
    await waitForWebhook(api.db.knex, original!.id, Successful);

    const resent = await readJson<WebhookRead>(await resend(original!.id), 201);
    expect(resent.id).not.toBe(original!.id);
    expect(resent.registrationId).toBe(registrationId);
    expect(resent.lastAction).toMatchObject({ action: 'webhook.resend', accountId: world.pmc.full.id });
    await waitForWebhook(api.db.knex, resent.id, Successful);

    // the receiver got the very same body again, under the new webhook's id
    expect(deliveredText(resent.id)).toBe(deliveredText(original!.id));
    const hooks = await webhooksOf(api, registrationId);
    expect(hooks.map((h) => h.entity_change_id)).toEqual([
      original!.entity_change_id,
      original!.entity_change_id,
    ]);

    const audit = await readJson<Page<OperatorActionRead>>(
      await api.fetch(`/api/operator-actions?action=webhook.resend&registrationId=${registrationId}`, {
        token: token(),
      }),
    );
    expect(audit.items).toHaveLength(1);
    expect(audit.items[0]).toMatchObject({
      action: 'webhook.resend',
      webhookId: original!.id,
      changed: 1,
      detail: { resentAs: resent.id },
    });
  });

  it('in a group, resends only the latest webhook, at the tail; an older one is a 409 that writes nothing', async () => {
    const registrationId = await registration(true);
    const propertyId = await createProperty(api, token(), 'Group House');
    await patchProperty(api, token(), propertyId, { notes: 'second state' });
    const [first, latest] = await webhooksOf(api, registrationId);
    await waitForWebhook(api.db.knex, latest!.id, Successful);

    await expectProblem(await resend(first!.id), 409, {
      detail: new RegExp(
        `^Webhook ${first!.id} is position 1 of group Property:${propertyId}, whose latest webhook is position 2: resending it would deliver an older state after a newer one`,
      ),
    });
    expect(await webhooksOf(api, registrationId)).toHaveLength(2);
    const refusedAudit = await api.db.knex('operator_actions').where({ webhook_id: first!.id });
    expect(refusedAudit).toEqual([]);

    const resent = await readJson<WebhookRead>(await resend(latest!.id), 201);
    expect(resent).toMatchObject({ groupKey: `Property:${propertyId}`, groupSeq: 3 });
    await waitForWebhook(api.db.knex, resent.id, Successful);
    expect(deliveredText(resent.id)).toBe(deliveredText(latest!.id));
    // the resend is now the group's latest: resending the webhook it copied is refused too
    await expectProblem(await resend(latest!.id), 409, { detail: /whose latest webhook is position 3/ });
  });

  it('refuses a webhook that is not Successful, and one of a registration since deleted', async () => {
    const registrationId = await registration(false);
    await createProperty(api, token(), 'Aborted House');
    const [hook] = await webhooksOf(api, registrationId);
    await waitForWebhook(api.db.knex, hook!.id, Successful);
    await setWebhookState(api.db.knex, hook!.id, Aborted);
    await expectProblem(await resend(hook!.id), 409, {
      detail: `Only a Successful webhook can be resent; webhook ${hook!.id} is Aborted`,
    });
    await setWebhookState(api.db.knex, hook!.id, Successful);
    await api.db.knex('webhook_registrations').where({ id: registrationId }).update({ deleted: new Date() });
    await expectProblem(await resend(hook!.id), 409, {
      detail: `The registration of webhook ${hook!.id} was deleted`,
    });
    expect(await webhooksOf(api, registrationId)).toHaveLength(1);
  });

  it('is a 404 for a webhook of another party, and follows the access rules of the other actions', async () => {
    const foreign = (
      await seedRegistration(api.db.knex, { partyId: world.otherPmc.id, targetUrl: delivery.target.url })
    ).id;
    await createProperty(api, world.otherPmc.full.token, 'Foreign House');
    const [hook] = await webhooksOf(api, foreign);
    await waitForWebhook(api.db.knex, hook!.id, Successful);
    await expectProblem(await resend(hook!.id), 404);
    expect(await webhooksOf(api, foreign)).toHaveLength(1);
    await expectAccessRules(api, world, {
      method: 'POST',
      path: `/api/webhooks/${hook!.id}/resend`,
      allow: [1, 2],
      permission: 'Webhook.Update',
    });
  });
});
