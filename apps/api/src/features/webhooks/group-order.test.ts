import { UNDELIVERED_WEBHOOK_STATES, WebhookState, type Page, type WebhookRead } from '@platform/shared';
import { beforeAll, describe, expect, it } from 'vitest';
import { buildAccount, buildParty, login, useTestApi } from '../../../tests/support/api';
import { act, createProperty, groupOf, register } from '../../../tests/support/webhooks';

/**
 * Group order under concurrency: many transactions change one entity at once while earlier
 * webhooks of its group are released concurrently; the group must keep the chain rule and commit
 * order, which a test of one request at a time cannot show.
 */
const { api } = useTestApi();
let token: string;

beforeAll(async () => {
  const party = await buildParty(api.deps, { type: 2 });
  const account = await buildAccount(api.deps, { partyId: party.id });
  token = (await login(api, account.email)).accessToken;
});

const WAVES = 5;
const PATCHES_PER_WAVE = 20;
const RESOLVERS = 3;

interface GroupRow {
  id: number;
  state: WebhookState;
  group_seq: number;
  entity_change_id: number;
  entity: { notes: string | null };
}

describe('a grouped registration under concurrent changes and releases', () => {
  it('keeps one head, everything after it Pending, and group order equal to commit order', async () => {
    const registration = await register(api, token, { shouldGroup: true });
    const propertyId = await createProperty(api, token);
    const groupKey = `Property:${propertyId}`;

    /** The current head, through the operator API. */
    const head = async (): Promise<number | undefined> => {
      const response = await api.fetch(
        `/api/webhooks?registrationId=${registration.id}&state=${WebhookState.Created}`,
        { token },
      );
      const page = (await response.json()) as Page<WebhookRead>;
      expect(page.items.length, 'more than one head').toBeLessThanOrEqual(1);
      return page.items[0]?.id;
    };

    const resolvedOrder: number[] = [];
    const abortedPending: number[] = [];
    let patching = true;
    /** Resolves the current head again and again while the patches run; several of these race. */
    const resolver = async (index: number) => {
      let rounds = 0;
      while (patching) {
        const id = await head();
        if (id !== undefined) {
          const response = await act(api, token, id, 'resolve');
          // another resolver may have ended it first
          expect([200, 409], await response.clone().text()).toContain(response.status);
          if (response.status === 200) resolvedOrder.push(id);
          await response.body?.cancel();
        }
        // now and then one resolver aborts a waiting webhook: it leaves the chain concurrently
        if (index === 0 && ++rounds % 4 === 0) {
          const pending = (await (
            await api.fetch(
              `/api/webhooks?registrationId=${registration.id}&state=${WebhookState.Pending}&SortByAttributeName=id&AscendingOrder=false&PageSize=1`,
              { token },
            )
          ).json()) as Page<WebhookRead>;
          const last = pending.items[0];
          if (last) {
            const response = await act(api, token, last.id, 'abort');
            expect([200, 409]).toContain(response.status);
            if (response.status === 200) abortedPending.push(last.id);
            await response.body?.cancel();
          }
        }
      }
    };

    const resolvers = Array.from({ length: RESOLVERS }, (_, index) => resolver(index));
    for (let wave = 0; wave < WAVES; wave++) {
      const responses = await Promise.all(
        Array.from({ length: PATCHES_PER_WAVE }, (_, i) =>
          api.fetch(`/api/properties/${propertyId}`, {
            method: 'PATCH',
            token,
            json: { notes: `wave ${wave} patch ${i}` },
          }),
        ),
      );
      for (const response of responses) {
        expect(response.status, await response.clone().text()).toBe(200);
        await response.body?.cancel();
      }
    }
    patching = false;
    await Promise.all(resolvers);

    const rows: GroupRow[] = await api.db
      .knex('webhooks as w')
      .join('entity_changes as c', 'c.id', 'w.entity_change_id')
      .where({ 'w.registration_id': registration.id })
      .orderBy('w.group_seq')
      .select('w.id', 'w.state', 'w.group_seq', 'w.entity_change_id', 'c.entity');
    const total = 1 + WAVES * PATCHES_PER_WAVE;
    expect(rows).toHaveLength(total);
    expect(resolvedOrder.length, 'the resolvers released some heads concurrently').toBeGreaterThan(0);

    // group_seq is 1..n without gaps, and its order is the changes' commit order: the writes of
    // one property serialise on its row lock, so their change ids follow commit order too
    expect(rows.map((row) => row.group_seq)).toEqual(Array.from({ length: total }, (_, i) => i + 1));
    const changeIds = rows.map((row) => row.entity_change_id);
    expect(changeIds).toEqual([...changeIds].sort((a, b) => a - b));
    // the last committed write is the property's state, and the last webhook of the group carries it
    const property = await api.db.knex('properties').where({ id: propertyId }).first('notes');
    expect(rows.at(-1)!.entity.notes).toBe(property.notes);

    const expectChainRule = async () => {
      const current: { id: number; state: WebhookState; group_seq: number }[] = await api.db
        .knex('webhooks')
        .where({ registration_id: registration.id })
        .orderBy('group_seq')
        .select('id', 'state', 'group_seq');
      const open = current.filter((row) => UNDELIVERED_WEBHOOK_STATES.includes(row.state));
      const group = await groupOf(api, registration.id, groupKey);
      expect(group).toEqual({ next_seq: total, open_count: open.length });
      if (open.length > 0) {
        // exactly one head, the oldest open webhook, and everything after it waits
        expect(open.map((row) => row.state)).toEqual([
          WebhookState.Created,
          ...open.slice(1).map(() => WebhookState.Pending),
        ]);
      }
      // only resolved heads and aborted Pendings have ended
      for (const row of current.filter((r) => !open.includes(r))) {
        expect([WebhookState.Aborted, WebhookState.Resolved], `webhook ${row.id}`).toContain(row.state);
        expect(row.state === WebhookState.Aborted ? abortedPending : resolvedOrder).toContain(row.id);
      }
      return current;
    };
    await expectChainRule();

    // heads were resolved in group order: each release promoted the next open webhook
    const seqOf = new Map(rows.map((row) => [row.id, row.group_seq]));
    const resolvedSeqs = resolvedOrder.map((id) => seqOf.get(id)!);
    expect(resolvedSeqs).toEqual([...resolvedSeqs].sort((a, b) => a - b));

    // drain the rest one head at a time: the chain hands over in group_seq order until empty
    const drained: number[] = [];
    for (let id = await head(); id !== undefined; id = await head()) {
      const response = await act(api, token, id, 'resolve');
      expect(response.status).toBe(200);
      drained.push(seqOf.get(id)!);
      resolvedOrder.push(id);
      await response.body?.cancel();
    }
    expect(drained).toEqual([...drained].sort((a, b) => a - b));
    expect(Math.min(...drained)).toBeGreaterThan(Math.max(0, ...resolvedSeqs));
    expect(resolvedOrder.map((id) => seqOf.get(id)!)).toEqual([...resolvedSeqs, ...drained]);
    const final = await expectChainRule();
    expect(
      final.every((row) => row.state === WebhookState.Aborted || row.state === WebhookState.Resolved),
    ).toBe(true);
    expect(resolvedOrder.length + abortedPending.length).toBe(total);
  });
});
