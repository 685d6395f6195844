import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { WebhookState } from '@platform/shared';
import { createTestDatabase, setWebhookState, truncateWebhooks, type TestDatabase } from '@platform/testkit';
import type { Knex } from 'knex';
import { claimNotifiedWebhooks, type ClaimNotifiedOptions } from './claim';
import { backlog, ownRegistration, setBreaker } from '../../tests/queue';

// The notified rows' claim (webhooks_claim_notified) against a real Postgres: it takes by primary
// key only what the fair claim would take at once with every rule trivially met, and counts every
// other named row still claimable as `rest`, which sends the dispatcher to the fair claim.

let db: TestDatabase;
let knex: Knex;

const notified = (ids: number[], options: Partial<Omit<ClaimNotifiedOptions, 'ids'>> & { on?: Knex } = {}) =>
  claimNotifiedWebhooks(options.on ?? knex, {
    ids,
    leaseMs: 60_000,
    dispatcherId: options.dispatcherId ?? 'd1',
    hostRoom: options.hostRoom,
    fullTargets: options.fullTargets ?? [],
    origins: options.origins ?? [],
    originHeld: options.originHeld ?? [],
  });

const row = (id: number) => knex('webhooks').where({ id }).first('locked_by', 'attempt_count', 'state');

beforeAll(async () => {
  db = await createTestDatabase();
  knex = db.knex;
});
afterAll(() => db.drop());
beforeEach(() => truncateWebhooks(knex));

describe('the notified rows claim', () => {
  it('leases a notified head with what its delivery needs, and a second call finds it taken', async () => {
    const a = await ownRegistration(knex, 'http://127.0.0.1:9/a');
    const [id] = await backlog(knex, a, 1);
    const first = await notified([id!]);
    expect(first.rest).toBe(0);
    expect(first.leased).toMatchObject([
      { id, registration_id: a.id, target_id: a.targetId, attempt: 1, target_url: 'http://127.0.0.1:9/a' },
    ]);
    expect(first.leased[0]!.entity).toBeTruthy();
    expect(await row(id!)).toMatchObject({ locked_by: 'd1', attempt_count: 1 });
    // leased (here by d1): nothing to take, nothing left for the fair claim
    expect(await notified([id!], { dispatcherId: 'd2' })).toEqual({ leased: [], rest: 0 });
  });

  it('takes one row per endpoint and the host room per origin; the rest is left to the fair claim', async () => {
    const a = await ownRegistration(knex, 'http://127.0.0.1:9/a');
    const ids = await backlog(knex, a, 2);
    const perEndpoint = await notified(ids);
    expect(perEndpoint.leased.map((w) => w.id)).toEqual([ids[0]]);
    expect(perEndpoint.rest).toBe(1);

    const b = await ownRegistration(knex, 'http://127.0.0.1:9/b');
    const c = await ownRegistration(knex, 'http://127.0.0.1:9/c');
    const other = await ownRegistration(knex, 'http://127.0.0.2:9/d');
    const named = [
      ...(await backlog(knex, b, 1)),
      ...(await backlog(knex, c, 1)),
      ...(await backlog(knex, other, 1)),
    ];
    const perHost = await notified(named, { hostRoom: 1 });
    // one of the host's two endpoints, and the other origin's
    expect(perHost.leased.map((w) => w.id)).toEqual([named[0], named[2]]);
    expect(perHost.rest).toBe(1);
  });

  it('takes rows of an origin the dispatcher holds webhooks of, within what is left of its host room', async () => {
    const endpoints = await Promise.all(
      ['a', 'b', 'c'].map((path) => ownRegistration(knex, `http://127.0.0.1:9/${path}`)),
    );
    const named: number[] = [];
    for (const endpoint of endpoints) named.push(...(await backlog(knex, endpoint, 1)));
    // the dispatcher holds 2 of the origin, which may have 4: room for 2 more
    const held = { hostRoom: 4, origins: ['http://127.0.0.1:9'], originHeld: [2] };
    const claim = await notified(named, held);
    expect(claim.leased.map((w) => w.id)).toEqual(named.slice(0, 2));
    expect(claim.rest).toBe(1);
    // no per-host cap: what it holds of the origin does not matter
    expect(await notified(named, { ...held, hostRoom: undefined })).toEqual({
      leased: [expect.objectContaining({ id: named[2] })],
      rest: 0,
    });
  });

  it('leaves to the fair claim every row a rule of the fair claim applies to', async () => {
    const cases: [
      string,
      (r: { id: number; targetId: number }) => Promise<unknown>,
      ((r: { targetId: number }) => Partial<ClaimNotifiedOptions>)?,
    ][] = [
      ['paused', (r) => knex('webhook_registrations').where({ id: r.id }).update({ status: 'paused' })],
      [
        'deleted',
        (r) => knex('webhook_registrations').where({ id: r.id }).update({ deleted: knex.fn.now() }),
      ],
      ['breaker open', (r) => setBreaker(knex, r.targetId, 'open', { openForSeconds: 60 })],
      ['breaker half-open', (r) => setBreaker(knex, r.targetId, 'half-open', { openForSeconds: -1 })],
      [
        'held',
        (r) =>
          knex('webhook_targets')
            .where({ id: r.targetId })
            .update({ hold_until: knex.raw(`now() + interval '1 minute'`) }),
      ],
      ['rate-limited', (r) => knex('webhook_targets').where({ id: r.targetId }).update({ rate_limit: 10 })],
      [
        'not due',
        (r) =>
          knex('webhooks')
            .where({ registration_id: r.id })
            .update({ next_attempt_at: knex.raw(`now() + interval '1 minute'`) }),
      ],
      ['endpoint without room', async () => {}, (r) => ({ fullTargets: [r.targetId] })],
      [
        'host room used up',
        async () => {},
        () => ({ hostRoom: 2, origins: ['http://127.0.0.1:9'], originHeld: [2] }),
      ],
    ];
    for (const [name, apply, limits] of cases) {
      const r = await ownRegistration(knex, `http://127.0.0.1:9/${name.replace(/ /g, '-')}`);
      const [id] = await backlog(knex, r, 1);
      await apply(r);
      expect({ name, claim: await notified([id!], limits?.(r)) }).toEqual({
        name,
        claim: { leased: [], rest: 1 },
      });
      expect(await row(id!)).toMatchObject({ locked_by: null, attempt_count: 0 });
    }
  });

  it('leaves a row another replica is locking to the fair claim, and counts it taken once that replica committed', async () => {
    const a = await ownRegistration(knex, 'http://127.0.0.1:9/a');
    const [id] = await backlog(knex, a, 1);
    await knex.transaction(async (trx) => {
      expect((await notified([id!], { on: trx })).leased).toHaveLength(1);
      // not committed yet: skipped, and still claimable as far as d2 can see
      expect(await notified([id!], { dispatcherId: 'd2' })).toEqual({ leased: [], rest: 1 });
    });
    expect(await notified([id!], { dispatcherId: 'd2' })).toEqual({ leased: [], rest: 0 });
    expect(await row(id!)).toMatchObject({ locked_by: 'd1', attempt_count: 1 });
  });

  it('counts a row that is no longer claimable as taken', async () => {
    const a = await ownRegistration(knex, 'http://127.0.0.1:9/a');
    const [id] = await backlog(knex, a, 1);
    await knex.transaction((trx) => setWebhookState(trx, id!, WebhookState.Aborted));
    expect(await notified([id!])).toEqual({ leased: [], rest: 0 });
  });
});
