import {
  PartyType,
  TokenScope,
  WebhookState,
  type WebhookOperationRead,
  type WebhookRead,
} from '@platform/shared';
import type { Principal } from '../../auth/principal';
import { propertyChange, seedChange, seedRegistration, setWebhookState } from '@platform/testkit';
import pino from 'pino';
import { beforeAll, describe, expect, it } from 'vitest';
import { buildAccount, buildParty, login, useTestApi } from '../../../tests/support/api';
import { createOperation, OperationRunner } from './operation-runner';

const { Created, Retrying, Successful, Failed, Aborted, Pending, Resolved } = WebhookState;

// batches of 3: every operation below takes several
const { api } = useTestApi({ config: { WEBHOOK_OPERATION_BATCH: '3' } });
let token: string;
let partyId: number;
let accountId: number;
let accountEmail: string;

beforeAll(async () => {
  partyId = (await buildParty(api.deps, { type: 2 })).id;
  const account = await buildAccount(api.deps, { partyId });
  accountId = account.id;
  accountEmail = account.email;
  token = (await login(api, account.email)).accessToken;
});

/** Starts a bulk action (or anything posting an operation) and waits until it finished. */
async function operate(path: string, body: unknown, as = token): Promise<WebhookOperationRead> {
  const response = await api.fetch(path, { method: 'POST', token: as, json: body });
  expect(response.status, await response.clone().text()).toBe(202);
  const started = (await response.json()) as WebhookOperationRead;
  await api.deps.operations.idle();
  const read = await api.fetch(`/api/webhook-operations/${started.id}`, { token: as });
  expect(read.status).toBe(200);
  return (await read.json()) as WebhookOperationRead;
}

/** The caller as the runner sees it, for operations created without a request. */
const principalOf = (): Principal => ({
  accountId,
  partyId,
  partyName: 'P',
  partyType: PartyType.PropertyManagementCompany,
  email: 'x@example.com',
  scope: TokenScope.Platform,
  permissions: new Set<number>(),
});

const bulk = (body: unknown, as = token) => operate('/api/webhooks/bulk', body, as);

/** A registration of the party with `entities` × `perEntity` changes, written through enqueue. */
async function registrationWithWebhooks(
  options: { shouldGroup?: boolean; continueAfterFail?: boolean; entities?: number; perEntity?: number } = {},
): Promise<{ registrationId: number; ids: number[][] }> {
  const { id: registrationId } = await seedRegistration(api.db.knex, {
    partyId,
    targetUrl: 'https://hooks.example.com/ops',
    shouldGroup: options.shouldGroup ?? false,
    shouldGroupContinueAfterFail: options.continueAfterFail ?? false,
  });
  const ids: number[][] = [];
  for (let entity = 1; entity <= (options.entities ?? 2); entity++) {
    const of: number[] = [];
    for (let k = 0; k < (options.perEntity ?? 3); k++) {
      const fanned = await seedChange(api.db.knex, propertyChange(partyId, entity));
      of.push(...fanned.filter((id) => id > 0));
    }
    ids.push(of);
  }
  // only this registration's webhooks: others of the party fan out too
  const own = await api.db.knex('webhooks').where({ registration_id: registrationId }).pluck('id');
  return { registrationId, ids: ids.map((group) => group.filter((id) => own.includes(id))) };
}

const statesOf = async (ids: number[]) =>
  (await api.db.knex('webhooks').whereIn('id', ids).orderBy('id').select('state')).map((row) => row.state);

/** Everything an operation could change, to prove a dry run changed nothing. */
const snapshot = async () => ({
  webhooks: await api.db.knex('webhooks').orderBy('id').select('*'),
  groups: await api.db.knex('webhook_groups').orderBy(['registration_id', 'group_key']).select('*'),
  targets: await api.db.knex('webhook_targets').orderBy('id').select('*'),
});

describe('POST /api/webhooks/bulk', () => {
  it('resolves every matching webhook in batches, releasing groups as the single action does, and audits it', async () => {
    const { registrationId, ids } = await registrationWithWebhooks({ shouldGroup: true });
    const [first, second] = ids as [number[], number[]];
    // group 1's head failed (it blocks its group); group 2's head is still Created
    await setWebhookState(api.db.knex, first[0]!, Failed);
    expect(await statesOf([...first, ...second])).toEqual([
      Failed,
      Pending,
      Pending,
      Created,
      Pending,
      Pending,
    ]);

    const dry = await bulk({ action: 'resolve', filter: { registrationId, states: [Failed] }, dryRun: true });
    expect(dry).toMatchObject({ state: 'done', dryRun: true, total: 1, done: 1, changed: 1, skipped: {} });

    const before = await snapshot();
    const dryAll = await bulk({ action: 'abort', filter: { registrationId }, dryRun: true });
    expect(dryAll).toMatchObject({ state: 'done', total: 6, done: 6, changed: 6, skipped: {} });
    expect(await snapshot()).toEqual(before);

    const resolved = await bulk({ action: 'resolve', filter: { registrationId, states: [Failed] } });
    expect(resolved).toMatchObject({
      action: 'resolve',
      state: 'done',
      dryRun: false,
      total: 1,
      done: 1,
      changed: 1,
      skipped: {},
      requestedByAccountId: accountId,
      error: null,
    });
    expect(resolved.finishedAt).not.toBeNull();
    // the blocker resolved, its group's next webhook is the head
    expect(await statesOf(first)).toEqual([Resolved, Created, Pending]);

    // aborting everything of the registration: 6 selected; one already final
    const aborted = await bulk({ action: 'abort', filter: { registrationId } });
    expect(aborted).toMatchObject({ total: 6, done: 6, changed: 5, skipped: { final: 1 } });
    expect(await statesOf([...first, ...second])).toEqual([
      Resolved,
      Aborted,
      Aborted,
      Aborted,
      Aborted,
      Aborted,
    ]);
    const groups = await api.db
      .knex('webhook_groups')
      .where({ registration_id: registrationId })
      .select('open_count');
    expect(groups.map((g) => g.open_count)).toEqual([0, 0]);

    // safe to run twice: nothing left to change
    const again = await bulk({ action: 'abort', filter: { registrationId } });
    expect(again).toMatchObject({ total: 6, done: 6, changed: 0, skipped: { final: 6 } });

    // the audit trail and each webhook's last action say who did it
    const audit = await api.db.knex('operator_actions').where({ operation_id: aborted.id }).first();
    expect(audit).toMatchObject({
      action: 'webhooks.bulk-abort',
      account_id: accountId,
      party_id: partyId,
      registration_id: registrationId,
      changed: 5,
      dry_run: false,
      filter: { registrationId },
    });
    const read = (await (await api.fetch(`/api/webhooks/${second[0]}`, { token })).json()) as WebhookRead;
    expect(read.lastAction).toEqual({
      id: audit.id,
      action: 'webhooks.bulk-abort',
      accountId,
      // the party's own account: its email, as the audit trail shows it
      accountEmail,
      at: expect.any(String),
    });
    // a real operation's items are dropped once it is done (a dry run keeps its selection for the
    // real run that confirms it: from-dry-run.test.ts)
    expect(
      await api.db
        .knex('webhook_operation_items as i')
        .join('webhook_operations as o', 'o.id', 'i.operation_id')
        .where('o.dry_run', false)
        .count({ n: '*' }),
    ).toEqual([{ n: 0 }]);
  });

  it('retries Failed webhooks, with one more attempt or a fresh schedule, and half-opens their open breaker', async () => {
    const { registrationId, ids } = await registrationWithWebhooks({ entities: 4, perEntity: 1 });
    const all = ids.flat();
    await api.db.knex('webhooks').whereIn('id', all).update({ state: Failed, attempt_count: 7 });
    await api.db
      .knex('webhook_targets')
      .whereIn('id', api.db.knex('webhook_registrations').where({ id: registrationId }).select('target_id'))
      .update({ breaker_state: 'open', open_until: new Date(Date.now() + 600_000) });

    const once = await bulk({
      action: 'retry',
      filter: { registrationId, createdBefore: '2999-01-01T00:00:00Z' },
    });
    expect(once).toMatchObject({ total: 4, changed: 4, freshSchedule: false });
    expect(await api.db.knex('webhooks').whereIn('id', all).pluck('attempt_count')).toEqual([7, 7, 7, 7]);
    expect(await statesOf(all)).toEqual([Retrying, Retrying, Retrying, Retrying]);
    const target = await api.db
      .knex('webhook_targets')
      .whereIn('id', api.db.knex('webhook_registrations').where({ id: registrationId }).select('target_id'))
      .first('breaker_state');
    expect(target.breaker_state).toBe('half-open');

    // a second retry finds none Failed
    const twice = await bulk({ action: 'retry', filter: { registrationId } });
    expect(twice).toMatchObject({ total: 4, changed: 0, skipped: { 'not-failed': 4 } });

    await api.db.knex('webhooks').whereIn('id', all).update({ state: Failed });
    const fresh = await bulk({ action: 'retry', filter: { registrationId }, freshSchedule: true });
    expect(fresh).toMatchObject({ total: 4, changed: 4, freshSchedule: true });
    expect(await api.db.knex('webhooks').whereIn('id', all).pluck('attempt_count')).toEqual([0, 0, 0, 0]);
  });

  it('selects by entity, group, creation time, and the last attempt’s error kind and status code', async () => {
    const { registrationId, ids } = await registrationWithWebhooks({
      shouldGroup: true,
      entities: 3,
      perEntity: 1,
    });
    const [a, b, c] = ids.map((group) => group[0]!) as [number, number, number];
    await setWebhookState(api.db.knex, [a, b, c], Failed);
    const attempt = (webhookId: number, statusCode: number | null, errorKind: string) => ({
      webhook_id: webhookId,
      number: 1,
      started_at: new Date(),
      duration_ms: 5,
      status_code: statusCode,
      error_kind: errorKind,
    });
    await api.db.knex('webhook_attempts').insert([
      attempt(a, 503, 'status'),
      attempt(b, null, 'timeout'),
      // c's last attempt is the 500, after a timeout
      attempt(c, null, 'timeout'),
      attempt(c, 500, 'status'),
    ]);
    const count = async (filter: Record<string, unknown>) =>
      (await bulk({ action: 'resolve', filter: { registrationId, ...filter }, dryRun: true })).total;
    expect(await count({ errorKind: 'status' })).toBe(2);
    expect(await count({ errorKind: 'timeout' })).toBe(1);
    expect(await count({ errorKind: 'status', statusCode: 503 })).toBe(1);
    expect(await count({ entityName: 'Property', entityId: 2 })).toBe(1);
    expect(await count({ groupKey: 'Property:3' })).toBe(1);
    expect(await count({ entityName: 'Unit' })).toBe(0);
    expect(await count({ createdFrom: '2999-01-01T00:00:00Z' })).toBe(0);
    expect(await count({ states: [Successful, Aborted] })).toBe(0);
  });

  it('refuses bad requests, naming what is wrong, and keeps other parties’ webhooks out', async () => {
    const refusals: [unknown, string][] = [
      [{ action: 'delete', filter: {} }, 'action'],
      [{ action: 'retry', filter: { states: [9] } }, 'states'],
      [{ action: 'retry', filter: { state: 4 } }, 'state'],
      [{ action: 'abort', filter: {}, freshSchedule: true }, 'freshSchedule'],
      [{ action: 'retry', filter: { createdFrom: 'yesterday' } }, 'createdFrom'],
      [
        {
          action: 'retry',
          filter: { createdFrom: '2026-02-01T00:00:00Z', createdBefore: '2026-01-01T00:00:00Z' },
        },
        'createdBefore',
      ],
      [{ action: 'retry' }, 'filter'],
    ];
    for (const [body, field] of refusals) {
      const response = await api.fetch('/api/webhooks/bulk', { method: 'POST', token, json: body });
      expect(response.status, JSON.stringify(body)).toBe(400);
      expect(await response.text()).toContain(field);
    }
    expect(await api.db.knex('webhook_operations').where({ state: 'running' }).count({ n: '*' })).toEqual([
      { n: 0 },
    ]);

    // another PMC: it cannot name our registration, select our webhooks, or read our operations
    const other = await buildParty(api.deps, { type: 2 });
    const otherToken = (await login(api, (await buildAccount(api.deps, { partyId: other.id })).email))
      .accessToken;
    const { registrationId } = await registrationWithWebhooks({ entities: 1, perEntity: 2 });
    const named = await api.fetch('/api/webhooks/bulk', {
      method: 'POST',
      token: otherToken,
      json: { action: 'abort', filter: { registrationId } },
    });
    expect(named.status).toBe(404);
    const everything = await bulk({ action: 'abort', filter: {}, dryRun: true }, otherToken);
    expect(everything.total).toBe(0);
    const ours = await bulk({ action: 'abort', filter: { registrationId }, dryRun: true });
    expect((await api.fetch(`/api/webhook-operations/${ours.id}`, { token: otherToken })).status).toBe(404);

    // reading needs Webhook.Read, acting Webhook.Update
    const viewer = await buildAccount(api.deps, { partyId, permissions: ['Webhook.Read'] });
    const viewerToken = (await login(api, viewer.email)).accessToken;
    const refused = await api.fetch('/api/webhooks/bulk', {
      method: 'POST',
      token: viewerToken,
      json: { action: 'abort', filter: { registrationId } },
    });
    expect(refused.status).toBe(403);
    expect((await api.fetch(`/api/webhook-operations/${ours.id}`, { token: viewerToken })).status).toBe(200);
    expect((await api.fetch('/api/webhook-operations/999999', { token })).status).toBe(404);
  });

  it('refuses a second replay of a registration while one runs (it would deliver the window twice)', async () => {
    const { registrationId } = await registrationWithWebhooks({ entities: 1, perEntity: 1 });
    // a replay held by a runner that does not run it: it stays running
    const holder = new OperationRunner({
      knex: api.db.knex,
      logger: pino({ level: 'silent' }),
      now: () => new Date(),
    });
    const window = { since: '2026-01-01T00:00:00Z' };
    const running = await api.db.knex.transaction((trx) =>
      createOperation(trx, holder, principalOf(), {
        action: 'replay',
        registrationId,
        filter: window,
        audit: 'registration.replay',
      }),
    );
    const path = `/api/webhook-registrations/${registrationId}/replay`;
    const second = await api.fetch(path, { method: 'POST', token, json: window });
    expect(second.status).toBe(409);
    expect(await second.text()).toContain(`operation ${running.id}`);
    // the index refuses it too, whoever writes it
    await expect(
      api.db.knex.transaction((trx) =>
        createOperation(trx, holder, principalOf(), {
          action: 'replay',
          registrationId,
          filter: window,
          audit: 'registration.replay',
        }),
      ),
    ).rejects.toThrow('webhook_operations_one_replay');
    // a dry run counts alongside
    expect((await operate(path, { ...window, dryRun: true })).state).toBe('done');
    await api.db.knex('webhook_operations').where({ id: running.id }).update({ state: 'failed' });
    expect((await operate(path, window)).state).toBe('done');
  });

  it('can be read by the party whose registration it acted on, as the audit trail shows it, and by no other', async () => {
    const { registrationId } = await registrationWithWebhooks({ entities: 1, perEntity: 1 });
    const admin = await buildParty(api.deps, { type: PartyType.Admin });
    const adminToken = (await login(api, (await buildAccount(api.deps, { partyId: admin.id })).email))
      .accessToken;
    const byAdmin = await bulk({ action: 'abort', filter: { registrationId }, dryRun: true }, adminToken);
    const audit = (await (
      await api.fetch(`/api/operator-actions?registrationId=${registrationId}`, { token })
    ).json()) as { items: { operationId: number | null }[] };
    expect(audit.items.map((item) => item.operationId)).toContain(byAdmin.id);
    expect((await api.fetch(`/api/webhook-operations/${byAdmin.id}`, { token })).status).toBe(200);
    const other = await buildParty(api.deps, { type: 2 });
    const otherToken = (await login(api, (await buildAccount(api.deps, { partyId: other.id })).email))
      .accessToken;
    expect((await api.fetch(`/api/webhook-operations/${byAdmin.id}`, { token: otherToken })).status).toBe(
      404,
    );
  });

  it('runs at most two batches at once, the operations taking turns: a small one is not held up by a large one', async () => {
    const large = await registrationWithWebhooks({ entities: 30, perEntity: 1 });
    const small = await registrationWithWebhooks({ entities: 1, perEntity: 1 });
    const runner = api.deps.operations;
    // created as the route creates them (a dry run of abort), none run yet: so all four are there
    // before the first batch, whatever the machine's speed, and are kicked in order
    const create = async (registrationId: number) =>
      (
        await api.db.knex.transaction((trx) =>
          createOperation(trx, runner, principalOf(), {
            action: 'abort',
            registrationId,
            filter: { registrationId },
            audit: 'webhooks.bulk-abort',
            dryRun: true,
          }),
        )
      ).id;
    // three large operations of 11 batches each, then a small one of a single batch
    const larges = [
      await create(large.registrationId),
      await create(large.registrationId),
      await create(large.registrationId),
    ];
    const smallId = await create(small.registrationId);
    for (const id of [...larges, smallId]) runner.kick(id);
    await runner.idle();
    expect(api.deps.operations.maxInFlight).toBe(2);
    const finished = async (id: number) =>
      (await api.db
        .knex('webhook_operations')
        .where({ id })
        .first('finished_at', 'state', 'total', 'done')) as {
        finished_at: Date;
        state: string;
        total: number;
        done: number;
      };
    const smallRow = await finished(smallId);
    expect(smallRow).toMatchObject({ state: 'done', total: 1, done: 1 });
    for (const id of larges) {
      const row = await finished(id);
      // the small registration's change fanned out to the large one too
      expect(row).toMatchObject({ state: 'done', total: 31, done: 31 });
      // kicked last, it got a turn after one batch of each running one: it waited for none of them
      expect(smallRow.finished_at.getTime()).toBeLessThan(row.finished_at.getTime());
    }
  });

  it('is resumed by another API process once the lease of the one that started it ran out', async () => {
    const { registrationId, ids } = await registrationWithWebhooks({ entities: 4, perEntity: 2 });
    // a runner that creates the operation, then goes away before running a batch
    const gone = new OperationRunner({
      knex: api.db.knex,
      logger: pino({ level: 'silent' }),
      now: () => new Date(),
      leaseMs: 60_000,
    });
    const created = await api.db.knex.transaction((trx) =>
      createOperation(trx, gone, principalOf(), {
        action: 'abort',
        registrationId,
        filter: { registrationId },
        audit: 'webhooks.bulk-abort',
      }),
    );
    expect(created).toMatchObject({ state: 'running', total: 8, done: 0 });
    // the lease has not run out: nobody takes it over
    await api.deps.operations.resumeOrphans();
    await api.deps.operations.idle();
    expect(await statesOf(ids.flat())).not.toContain(Aborted);

    await api.db
      .knex('webhook_operations')
      .where({ id: created.id })
      .update({ lease_until: new Date(Date.now() - 1000) });
    await api.deps.operations.resumeOrphans();
    await api.deps.operations.idle();
    const read = (await (
      await api.fetch(`/api/webhook-operations/${created.id}`, { token })
    ).json()) as WebhookOperationRead;
    expect(read).toMatchObject({ state: 'done', total: 8, done: 8, changed: 8 });
    expect(new Set(await statesOf(ids.flat()))).toEqual(new Set([Aborted]));
  });
});
