import { WebhookState, type Page, type WebhookIssueRead, type WebhookOperationRead } from '@platform/shared';
import {
  bodyOf,
  propertyChange,
  seedChange,
  seedRegistration,
  setWebhookState,
  startDispatcher,
  startTestTarget,
  truncateWebhooks,
  waitForWebhook,
  type TargetAnswer,
  type TestTarget,
} from '@platform/testkit';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { expectProblem, readJson } from '../../../tests/support/http';
import { expectAccessRules, useTestApi } from '../../../tests/support/api';

const { Retrying, Successful, Failed } = WebhookState;

const { api, world } = useTestApi({ world: true });
let target: TestTarget;

/** What the target answers a change: its entity says (a status, or a reset connection). */
type Answer = { status: number } | { reset: true };

/** The registrations and webhooks the dispatcher left: see `beforeAll`. */
const hooks = {} as Record<
  's503' | 's500' | 'reset' | 'retrying503' | 'unattempted' | 'other' | 'deleted',
  number[]
>;
let mine: number;
let second: number;
let theirs: number;
let deleted: number;

/** Records a Property change of `partyId` (entity id `entityId`) the target answers with `answer`. */
const change = (partyId: number, entityId: number, answer: Answer) =>
  seedChange(api.db.knex, propertyChange(partyId, entityId, { answer }));

beforeAll(async () => {
  await truncateWebhooks(api.db.knex);
  target = await startTestTarget(
    (request) => bodyOf<{ entity: { answer: TargetAnswer } }>(request).entity.answer,
  );
  const registration = (partyId: number) =>
    seedRegistration(api.db.knex, { partyId, targetUrl: target.url }).then((r) => r.id);
  mine = await registration(world.pmc.id);
  second = await registration(world.pmc.id);
  theirs = await registration(world.otherPmc.id);
  deleted = await registration(world.pmc.id);

  const breaker = { DISPATCHER_BREAKER_FAILURES: '10000' };
  // phase 1: a single attempt, so every failure is final (Failed)
  hooks.s503 = [];
  hooks.s500 = [];
  hooks.reset = [];
  for (let i = 1; i <= 3; i++) hooks.s503.push(...(await change(world.pmc.id, i, { status: 503 })));
  for (let i = 4; i <= 5; i++) hooks.s500.push(...(await change(world.pmc.id, i, { status: 500 })));
  hooks.reset.push(...(await change(world.pmc.id, 6, { reset: true })));
  // every change of the PMC fans out to its three registrations: keep each set to `mine`
  const ofRegistration = async (ids: number[], registrationId: number) =>
    (
      await api.db.knex('webhooks').whereIn('id', ids).where('registration_id', registrationId).orderBy('id')
    ).map((row: { id: number }) => row.id);
  const all = [...hooks.s503, ...hooks.s500, ...hooks.reset];
  const successes = await change(world.pmc.id, 7, { status: 200 });
  hooks.other = await change(world.otherPmc.id, 8, { status: 503 });
  let dispatcher = await startDispatcher(api.db.url, { WEBHOOK_RETRY_SCHEDULE: '0s', ...breaker });
  try {
    for (const id of [...all, ...hooks.other]) await waitForWebhook(api.db.knex, id, Failed, { attempts: 1 });
    for (const id of successes) await waitForWebhook(api.db.knex, id, Successful, { attempts: 1 });
  } finally {
    expect(await dispatcher.stop()).toBe(0);
  }
  // phase 2: failures wait an hour for their second attempt (Retrying)
  hooks.retrying503 = [];
  for (let i = 9; i <= 10; i++) hooks.retrying503.push(...(await change(world.pmc.id, i, { status: 503 })));
  dispatcher = await startDispatcher(api.db.url, { WEBHOOK_RETRY_SCHEDULE: '0s,1h', ...breaker });
  try {
    for (const id of hooks.retrying503) await waitForWebhook(api.db.knex, id, Retrying, { attempts: 1 });
  } finally {
    expect(await dispatcher.stop()).toBe(0);
  }
  // Failed without an attempt: its attempts were pruned (attempts are kept for less time than webhooks)
  hooks.unattempted = [...(await change(world.pmc.id, 11, { status: 200 }))];
  await setWebhookState(api.db.knex, hooks.unattempted, Failed);
  hooks.deleted = await ofRegistration([...all], deleted);
  await api.db.knex('webhook_registrations').where({ id: deleted }).update({ deleted: new Date() });

  for (const key of ['s503', 's500', 'reset', 'retrying503'] as const) {
    const byRegistration = await ofRegistration(hooks[key], mine);
    expect(byRegistration.length * 3).toBe(hooks[key].length);
  }
}, 120_000);
afterAll(async () => {
  await target?.close();
});

const issues = async (token: string, query = '') => {
  const response = await api.fetch(`/api/webhook-issues${query}`, { token });
  return readJson<Page<WebhookIssueRead>>(response);
};

/** The line of `registrationId` expected for the webhooks `ids` (all of them fanned out alike). */
async function expectedLine(
  registrationId: number,
  ids: number[],
  state: number,
  errorKind: string | null,
  statusCode: number | null,
): Promise<WebhookIssueRead> {
  const rows: { id: number; created: Date; started_at: Date | null }[] = await api.db
    .knex('webhooks as w')
    .leftJoin('webhook_attempts as a', 'a.webhook_id', 'w.id')
    .whereIn('w.id', ids)
    .where('w.registration_id', registrationId)
    .select('w.id', 'w.created', 'a.started_at');
  const seen = rows.map((row) => (row.started_at ?? row.created).getTime());
  const registration = await api.db.knex('webhook_registrations').where({ id: registrationId }).first();
  return {
    registrationId,
    partyId: registration.party_id,
    targetUrl: target.url,
    state,
    errorKind,
    lastStatusCode: statusCode,
    count: rows.length,
    firstSeen: new Date(Math.min(...seen)).toISOString(),
    lastSeen: new Date(Math.max(...seen)).toISOString(),
    sampleWebhookId: Math.min(...rows.map((row) => row.id)),
    filter: { registrationId, states: [state], errorKind, statusCode },
  };
}

describe('triage (GET /api/webhook-issues)', () => {
  it('groups Failed and Retrying webhooks by registration, state, last error kind and status, largest first', async () => {
    const lines = async (registrationId: number) => [
      await expectedLine(registrationId, hooks.s503, Failed, 'status', 503),
      await expectedLine(registrationId, hooks.retrying503, Retrying, 'status', 503),
      await expectedLine(registrationId, hooks.s500, Failed, 'status', 500),
      await expectedLine(registrationId, hooks.reset, Failed, 'connection-reset', null),
      await expectedLine(registrationId, hooks.unattempted, Failed, null, null),
    ];
    const mineLines = await lines(mine);
    expect(mineLines.map((line) => line.count)).toEqual([3, 2, 2, 1, 1]);
    const secondLines = await lines(second);

    const page = await issues(world.pmc.full.token);
    // count desc; then registration, state, error kind, status code (nulls last)
    expect(page.items).toEqual(
      [...mineLines, ...secondLines].sort(
        (a, b) =>
          b.count - a.count ||
          a.registrationId - b.registrationId ||
          a.state - b.state ||
          Number(a.errorKind === null) - Number(b.errorKind === null) ||
          (a.errorKind ?? '').localeCompare(b.errorKind ?? '') ||
          (a.lastStatusCode ?? 1000) - (b.lastStatusCode ?? 1000),
      ),
    );
    expect(page).toMatchObject({ totalCount: 10, totalPages: 1, pageSize: 20, pageNumber: 1 });
    // the unattempted line is seen when its webhook was created
    const unattempted = mineLines[4]!;
    const created: { created: Date } = await api.db
      .knex('webhooks')
      .where({ id: unattempted.sampleWebhookId })
      .first('created');
    expect(unattempted.firstSeen).toBe(created.created.toISOString());
  });

  it('filters by registration and pages', async () => {
    const token = world.pmc.full.token;
    const only = await issues(token, `?registrationId=${second}`);
    expect(only.items.map((line) => [line.registrationId, line.count])).toEqual([
      [second, 3],
      [second, 2],
      [second, 2],
      [second, 1],
      [second, 1],
    ]);
    const paged = await issues(token, `?registrationId=${mine}&PageSize=2&PageNumber=3`);
    expect(paged.items.map((line) => [line.errorKind, line.lastStatusCode])).toEqual([[null, null]]);
    expect(paged).toMatchObject({ totalCount: 5, totalPages: 3, hasPreviousPage: true, hasNextPage: false });
  });

  it('shows a party its own registrations only, never deleted ones; Admin sees all', async () => {
    const registrationsOf = async (token: string) => [
      ...new Set((await issues(token, '?PageSize=100')).items.map((line) => line.registrationId)),
    ];
    expect(await registrationsOf(world.pmc.full.token)).toEqual(expect.arrayContaining([mine, second]));
    expect(await registrationsOf(world.pmc.full.token)).toHaveLength(2);
    expect(await registrationsOf(world.otherPmc.full.token)).toEqual([theirs]);
    expect((await registrationsOf(world.admin.full.token)).sort((a, b) => a - b)).toEqual(
      [mine, second, theirs].sort((a, b) => a - b),
    );
    // the deleted registration still has its Failed webhooks; triage leaves them out
    const failedOfDeleted = await api.db.knex('webhooks').where({ registration_id: deleted, state: Failed });
    expect(failedOfDeleted.length).toBeGreaterThan(0);
    expect((await issues(world.pmc.full.token, `?registrationId=${deleted}`)).items).toEqual([]);
    expect((await issues(world.pmc.full.token, `?registrationId=${theirs}`)).items).toEqual([]);
  });

  it('gives each line the bulk filter that selects exactly its webhooks', async () => {
    const token = world.pmc.full.token;
    const page = await issues(token);
    expect(page.items.some((line) => line.errorKind === null)).toBe(true);
    for (const line of page.items) {
      const response = await api.fetch('/api/webhooks/bulk', {
        method: 'POST',
        token,
        json: { action: line.state === Failed ? 'retry' : 'abort', filter: line.filter, dryRun: true },
      });
      expect(response.status, await response.clone().text()).toBe(202);
      const started = (await response.json()) as WebhookOperationRead;
      expect(started.total, JSON.stringify(line.filter)).toBe(line.count);
      await api.deps.operations.idle();
      const read = await api.fetch(`/api/webhook-operations/${started.id}`, { token });
      expect(((await read.json()) as WebhookOperationRead).changed).toBe(line.count);
    }
    // dry runs: the lines are as they were
    expect((await issues(token)).items).toEqual(page.items);
  });

  it('refuses a bad filter with 400 and applies the access rules', async () => {
    const token = world.pmc.full.token;
    await expectProblem(await api.fetch('/api/webhook-issues?registrationId=x', { token }), 400, {
      errors: { registrationId: ['registrationId must be a whole number'] },
    });
    await expectProblem(await api.fetch('/api/webhook-issues?state=4', { token }), 400);
    await expectAccessRules(api, world, {
      method: 'GET',
      path: '/api/webhook-issues',
      allow: [1, 2],
      permission: 'Webhook.Read',
    });
  });
});
