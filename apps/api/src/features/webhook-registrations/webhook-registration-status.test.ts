import {} from '@platform/testkit';
import type { WebhookRegistrationRead } from '@platform/shared';
import { describe, expect, it } from 'vitest';
import { expectProblem, readJson } from '../../../tests/support/http';
import { buildAccount, expectAccessRules, login, useTestApi } from '../../../tests/support/api';
import { auditExceptLifecycle, register, targetOf } from '../../../tests/support/webhooks';

const { api, world } = useTestApi({ world: true, truncateWebhooks: true });

async function setStatus(
  id: number,
  action: 'pause' | 'resume',
  token = world.pmc.full.token,
): Promise<WebhookRegistrationRead> {
  const response = await api.fetch(`/api/webhook-registrations/${id}/${action}`, { method: 'POST', token });
  return readJson<WebhookRegistrationRead>(response);
}

async function read(id: number, token = world.pmc.full.token): Promise<WebhookRegistrationRead> {
  const response = await api.fetch(`/api/webhook-registrations/${id}`, { token });
  return readJson<WebhookRegistrationRead>(response);
}

const registrationRow = (id: number) => api.db.knex('webhook_registrations').where({ id }).first();

/** Moves the test clock on a minute: the stamps a status change then writes. */
function changedAMinuteLater(): { statusChanged: string; lastModified: string } {
  api.clock.advance(60_000);
  const at = api.clock.now().toISOString();
  return { statusChanged: at, lastModified: at };
}

describe('POST /api/webhook-registrations/{id}/pause and /resume', () => {
  it('pauses and resumes, answering the registration with its status and when it changed', async () => {
    const { signingSecret: _s, ...created } = await register(api, world.pmc.full.token);
    expect(created).toMatchObject({ status: 'active', disabledReason: null, statusChanged: null });

    const pausedStamps = changedAMinuteLater();
    const paused = await setStatus(created.id, 'pause');
    expect(paused).toEqual({ ...created, status: 'paused', disabledReason: null, ...pausedStamps });
    expect(await read(created.id)).toEqual(paused);
    const list = await api.fetch('/api/webhook-registrations', { token: world.pmc.full.token });
    expect(((await list.json()) as { items: WebhookRegistrationRead[] }).items).toEqual([paused]);
    // the console finds the paused ones
    const active = await register(api, world.pmc.full.token);
    for (const [status, expected] of [
      ['paused', [paused.id]],
      ['active', [active.id]],
    ] as const) {
      const search = await api.fetch('/api/webhook-registrations/search', {
        method: 'POST',
        token: world.pmc.full.token,
        json: { filters: [{ attribute: 'status', operator: 'eq', value: status }] },
      });
      const found = (await search.json()) as { items: WebhookRegistrationRead[] };
      expect(found.items.map((r) => r.id)).toEqual(expected);
    }

    // a second pause is a 200 that changes nothing, not even when
    api.clock.advance(60_000);
    expect(await setStatus(created.id, 'pause')).toEqual(paused);
    expect(await read(created.id)).toEqual(paused);

    const resumedStamps = changedAMinuteLater();
    const resumed = await setStatus(created.id, 'resume');
    expect(resumed).toEqual({ ...paused, status: 'active', ...resumedStamps });
    expect(await read(created.id)).toEqual(resumed);
    expect((await read(active.id)).statusChanged).toBeNull();
  });

  it('resumes a disabled registration: clears its reason and failing run, and half-opens an open breaker', async () => {
    const created = await register(api, world.pmc.full.token);
    const openUntil = new Date(Date.now() + 3_600_000);
    await api.db
      .knex('webhook_registrations')
      .where({ id: created.id })
      .update({
        status: 'disabled',
        disabled_reason: 'gone',
        status_changed: new Date('2026-01-01T00:00:00Z'),
        failing_since: new Date('2026-01-01T00:00:00Z'),
        failures_since_success: 12,
      });
    await targetOf(api, created.id).update({
      breaker_state: 'open',
      open_until: openUntil,
      opens: 3,
      consecutive_failures: 7,
    });
    expect(await read(created.id)).toMatchObject({
      status: 'disabled',
      disabledReason: 'gone',
      statusChanged: '2026-01-01T00:00:00.000Z',
    });

    const resumed = await setStatus(created.id, 'resume');
    expect(resumed).toMatchObject({
      status: 'active',
      disabledReason: null,
      statusChanged: api.clock.now().toISOString(),
    });
    expect(await registrationRow(created.id)).toMatchObject({
      status: 'active',
      disabled_reason: null,
      failing_since: null,
      failures_since_success: 0,
    });
    // the next delivery is the trial, with no cool-down to wait out
    expect(await targetOf(api, created.id).first()).toMatchObject({
      breaker_state: 'half-open',
      trial_until: null,
    });
  });

  it('pauses a disabled registration: paused, its reason cleared, the breaker left alone', async () => {
    const created = await register(api, world.pmc.full.token);
    await api.db
      .knex('webhook_registrations')
      .where({ id: created.id })
      .update({ status: 'disabled', disabled_reason: 'failing' });
    await targetOf(api, created.id).update({ breaker_state: 'open' });

    expect(await setStatus(created.id, 'pause')).toMatchObject({ status: 'paused', disabledReason: null });
    expect(await targetOf(api, created.id).first()).toMatchObject({ breaker_state: 'open' });
  });

  it('audits every pause and resume in its transaction, also one that left the status as it was', async () => {
    await auditExceptLifecycle(api).del();
    const created = await register(api, world.pmc.full.token);
    await setStatus(created.id, 'pause');
    await setStatus(created.id, 'pause');
    await setStatus(created.id, 'resume');
    await setStatus(created.id, 'resume', world.admin.full.token);
    const audit = await auditExceptLifecycle(api).orderBy('id');
    expect(
      audit.map(({ action, account_id, party_id, registration_id, changed, detail, dry_run }) => ({
        action,
        account_id,
        party_id,
        registration_id,
        changed,
        detail,
        dry_run,
      })),
    ).toEqual([
      {
        action: 'registration.pause',
        account_id: world.pmc.full.id,
        party_id: world.pmc.id,
        registration_id: created.id,
        changed: 1,
        detail: { previousStatus: 'active', status: 'paused' },
        dry_run: false,
      },
      {
        action: 'registration.pause',
        account_id: world.pmc.full.id,
        party_id: world.pmc.id,
        registration_id: created.id,
        changed: 0,
        detail: { previousStatus: 'paused', status: 'paused' },
        dry_run: false,
      },
      {
        action: 'registration.resume',
        account_id: world.pmc.full.id,
        party_id: world.pmc.id,
        registration_id: created.id,
        changed: 1,
        detail: { previousStatus: 'paused', status: 'active' },
        dry_run: false,
      },
      {
        action: 'registration.resume',
        account_id: world.admin.full.id,
        party_id: world.admin.id,
        registration_id: created.id,
        changed: 0,
        detail: { previousStatus: 'active', status: 'active' },
        dry_run: false,
      },
    ]);
    // refused calls leave no trace
    await auditExceptLifecycle(api).del();
    const foreign = await register(api, world.otherPmc.full.token);
    const refused = await api.fetch(`/api/webhook-registrations/${foreign.id}/pause`, {
      method: 'POST',
      token: world.pmc.full.token,
    });
    expect(refused.status).toBe(404);
    expect(await auditExceptLifecycle(api)).toEqual([]);
  });

  it('answers 404 for another party’s or a deleted registration and leaves it alone', async () => {
    const foreign = await register(api, world.otherPmc.full.token);
    const deleted = await register(api, world.pmc.full.token);
    const removed = await api.fetch(`/api/webhook-registrations/${deleted.id}`, {
      method: 'DELETE',
      token: world.pmc.full.token,
    });
    expect(removed.status).toBe(204);
    for (const id of [foreign.id, deleted.id, 999_999]) {
      for (const action of ['pause', 'resume']) {
        await expectProblem(
          await api.fetch(`/api/webhook-registrations/${id}/${action}`, {
            method: 'POST',
            token: world.pmc.full.token,
          }),
          404,
        );
      }
    }
    expect(await registrationRow(foreign.id)).toMatchObject({ status: 'active', status_changed: null });
    expect(await registrationRow(deleted.id)).toMatchObject({ status: 'active', status_changed: null });
    // an Admin sees every party's registrations
    expect(await setStatus(foreign.id, 'pause', world.admin.full.token)).toMatchObject({ status: 'paused' });
  });

  it('needs Webhook.Update: the registration permissions are not enough', async () => {
    const created = await register(api, world.pmc.full.token);
    const registrar = await buildAccount(api.deps, {
      partyId: world.pmc.id,
      permissions: ['WebhookRegistration.Read', 'WebhookRegistration.Update', 'Webhook.Read'],
    });
    const { accessToken } = await login(api, registrar.email);
    for (const action of ['pause', 'resume']) {
      await expectProblem(
        await api.fetch(`/api/webhook-registrations/${created.id}/${action}`, {
          method: 'POST',
          token: accessToken,
        }),
        403,
      );
    }
    expect(await registrationRow(created.id)).toMatchObject({ status: 'active', status_changed: null });

    const inScope = async (caller: { type: number; full: { token: string } }) =>
      caller.type === 1 || caller.type === 2 ? (await register(api, caller.full.token)).id : created.id;
    for (const action of ['pause', 'resume']) {
      await expectAccessRules(api, world, {
        method: 'POST',
        path: async (caller) => `/api/webhook-registrations/${await inScope(caller)}/${action}`,
        allow: [1, 2],
        permission: 'Webhook.Update',
      });
    }
  });
});
