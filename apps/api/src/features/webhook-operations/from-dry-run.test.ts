import { WebhookState, type WebhookOperationRead } from '@platform/shared';
import { propertyChange, seedChange, seedRegistration, setWebhookState } from '@platform/testkit';
import { beforeAll, describe, expect, it } from 'vitest';
import { expectProblem } from '../../../tests/support/http';
import { buildAccount, buildParty, login, useTestApi } from '../../../tests/support/api';

// The count confirmed is the count acted on: the real run takes the dry run's selection
// (`fromDryRun`) instead of reading the live filter again, so a webhook that fails between the
// count and the confirmation is not swept in ("Retry 767" retried 770).

const { Retrying, Failed } = WebhookState;

const { api } = useTestApi();
let token: string;
let otherToken: string;
let partyId: number;

beforeAll(async () => {
  partyId = (await buildParty(api.deps, { type: 2 })).id;
  token = (await login(api, (await buildAccount(api.deps, { partyId })).email)).accessToken;
  const other = (await buildParty(api.deps, { type: 2 })).id;
  otherToken = (await login(api, (await buildAccount(api.deps, { partyId: other })).email)).accessToken;
});

async function start(body: unknown, as = token): Promise<Response> {
  return api.fetch('/api/webhooks/bulk', { method: 'POST', token: as, json: body });
}

async function finished(response: Response): Promise<WebhookOperationRead> {
  expect(response.status, await response.clone().text()).toBe(202);
  const started = (await response.json()) as WebhookOperationRead;
  await api.deps.operations.idle();
  return (await (
    await api.fetch(`/api/webhook-operations/${started.id}`, { token })
  ).json()) as WebhookOperationRead;
}

describe('a bulk action confirmed from its dry run', () => {
  it('acts on exactly the rows the dry run counted, once', async () => {
    const { id: registrationId } = await seedRegistration(api.db.knex, {
      partyId,
      targetUrl: 'https://hooks.example.com/dry',
    });
    const ids: number[] = [];
    for (let i = 1; i <= 4; i++) ids.push(...(await seedChange(api.db.knex, propertyChange(partyId, i))));
    const counted = ids.slice(0, 3);
    await setWebhookState(api.db.knex, counted, Failed);
    const filter = { registrationId, states: [Failed] };

    const dry = await finished(await start({ action: 'retry', filter, dryRun: true }));
    expect(dry).toMatchObject({ state: 'done', total: 3, changed: 3 });
    // between the count and the confirmation a fourth webhook fails, and one counted is retried by hand
    await setWebhookState(api.db.knex, ids[3]!, Failed);
    await setWebhookState(api.db.knex, counted[2]!, Retrying);

    const real = await finished(await start({ action: 'retry', filter, fromDryRun: dry.id }));
    expect(real).toMatchObject({ state: 'done', dryRun: false, total: 3, changed: 2 });
    const states = await api.db.knex('webhooks').whereIn('id', ids).orderBy('id').pluck('state');
    expect(states).toEqual([Retrying, Retrying, Retrying, Failed]);
    const audit = await api.db.knex('operator_actions').where({ operation_id: real.id }).first();
    expect(audit).toMatchObject({
      action: 'webhooks.bulk-retry',
      changed: 2,
      detail: { fromDryRun: dry.id },
    });

    // a dry run lends its selection once
    await expectProblem(await start({ action: 'retry', filter, fromDryRun: dry.id }), 409, {
      detail: /no longer holds its selection/,
    });
  });

  it('refuses another party’s dry run, another action, a real run as source, and fromDryRun on a dry run', async () => {
    const { id: registrationId } = await seedRegistration(api.db.knex, {
      partyId,
      targetUrl: 'https://hooks.example.com/dry2',
    });
    const filter = { registrationId, states: [Failed] };
    const dry = await finished(await start({ action: 'retry', filter, dryRun: true }));
    await expectProblem(await start({ action: 'retry', filter: {}, fromDryRun: dry.id }, otherToken), 404);
    await expectProblem(await start({ action: 'abort', filter, fromDryRun: dry.id }), 400, {
      errors: { fromDryRun: [expect.stringContaining('another action')] },
    });
    const real = await finished(await start({ action: 'retry', filter }));
    await expectProblem(await start({ action: 'retry', filter, fromDryRun: real.id }), 400, {
      errors: { fromDryRun: [expect.stringContaining('not a dry run')] },
    });
    await expectProblem(await start({ action: 'retry', filter, dryRun: true, fromDryRun: dry.id }), 400, {
      errors: { fromDryRun: ['fromDryRun is for the real run, not a dry run'] },
    });
  });
});
