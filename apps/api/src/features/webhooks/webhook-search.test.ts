import { WEBHOOK_SEARCH_COUNT_CAP, type Page, type WebhookRead } from '@platform/shared';
import { seedBacklog, seedRegistration } from '@platform/testkit';
import { describe, expect, it } from 'vitest';
import { expectProblem, readJson } from '../../../tests/support/http';
import { useTestApi } from '../../../tests/support/api';
import { createProperty, patchProperty, register } from '../../../tests/support/webhooks';

const { api, world } = useTestApi({ world: true, truncateWebhooks: true });

const ids = async (response: Response) =>
  (await readJson<Page<WebhookRead>>(response)).items.map((webhook) => webhook.id);

/** The ids the search `q` finds for `token`, newest first, with the other parameters of `extra`. */
const found = (q: string, token = world.pmc.full.token, extra = '') =>
  api
    .fetch(`/api/webhooks?q=${encodeURIComponent(q)}${extra}`, { token })
    .then(ids)
    .then((list) => list.sort((a, b) => b - a));

const hooksOfChange = async (changeId: number) =>
  ((await api.db.knex('webhooks').where({ entity_change_id: changeId }).select('id')) as { id: string }[])
    .map((row) => Number(row.id))
    .sort((a, b) => b - a);

describe('search (GET /api/webhooks?q=)', () => {
  it('finds webhooks by the words of their payload (whole or begun), by webhook id, change (event) id and entity id, in scope', async () => {
    const token = world.pmc.full.token;
    const registration = await register(api, token);
    const needle = await createProperty(api, token, 'Haus Nadelöhr-7Q');
    const plain = await createProperty(api, token, 'Eichenhof');
    await patchProperty(api, token, plain, { notes: 'mentions NADELÖHR-7q in passing' });
    await patchProperty(api, token, plain, { notes: '100% sure_thing' });
    // another party's payload with the same text: out of the caller's scope
    const foreign = await register(api, world.otherPmc.full.token);
    await createProperty(api, world.otherPmc.full.token, 'Nadelöhr-7Q abroad');

    const changes = (await api.db
      .knex('entity_changes')
      .where({ initiator_party_id: world.pmc.id })
      .orderBy('id')
      .select('id', 'entity_id')) as { id: string; entity_id: number }[];
    const [created, , mentioned, percent] = changes.map((c) => Number(c.id));
    const withNeedle = [...(await hooksOfChange(created!)), ...(await hooksOfChange(mentioned!))].sort(
      (a, b) => b - a,
    );

    // a word of the payload, any case, or its beginning; several words are all required
    expect(await found('nadelöhr-7q')).toEqual(withNeedle);
    expect(await found('NADELÖ')).toEqual(withNeedle);
    expect(await found('Haus Nadel')).toEqual(await hooksOfChange(created!));
    expect(await found('Nadel Haus')).toEqual(await hooksOfChange(created!));
    expect(await found('Haus Eichenhof')).toEqual([]);
    expect(await found('sure_thing')).toEqual(await hooksOfChange(percent!));
    expect(await found('sure_thin')).toEqual(await hooksOfChange(percent!));
    // words, not any substring: the middle or end of a word is not found
    expect(await found('adelöhr')).toEqual([]);
    expect(await found('chenhof')).toEqual([]);
    // string values only: a key of the payload is not its text
    expect(await found('postalCode')).toEqual([]);
    // the search's characters are text, never the query syntax: no error, no wildcard
    for (const special of [
      "it's",
      'a\\b',
      "'''",
      'zq\\',
      '%%%',
      '!(zq|zr)',
      'zq & zr | zs',
      ':*:*',
      '<->',
      'zq:*A',
    ]) {
      const response = await api.fetch(`/api/webhooks?q=${encodeURIComponent(special)}`, { token });
      expect(response.status, special).toBe(200);
      expect((await readJson<Page<WebhookRead>>(response)).items, special).toEqual([]);
    }
    expect(await found('no such text anywhere')).toEqual([]);
    // with the other filters
    expect(await found('nadelöhr-7q', token, `&registrationId=${registration.id}`)).toEqual(withNeedle);
    expect(await found('nadelöhr-7q', token, `&registrationId=${foreign.id}`)).toEqual([]);

    // a whole number: the webhook of that id, the webhooks of the change of that id, of the entity of that id
    const [someHook] = await hooksOfChange(mentioned!);
    expect(await found(String(someHook))).toContain(someHook);
    expect(await found(String(created))).toEqual(await hooksOfChange(created!));
    const ofEntity = (
      await api.fetch(`/api/webhooks?entityName=Property&entityId=${plain}`, { token }).then(ids)
    ).sort((a, b) => b - a);
    expect(ofEntity.length).toBeGreaterThan(0);
    for (const id of ofEntity) expect(await found(String(plain))).toContain(id);
    expect(await found(String(needle))).not.toEqual(expect.arrayContaining(ofEntity));
  });

  it('refuses a text too short to search, or too long', async () => {
    const token = world.pmc.full.token;
    await expectProblem(await api.fetch('/api/webhooks?q=ab', { token }), 400, {
      errors: { q: ['q must be a number (an id) or at least 3 characters of payload text'] },
    });
    await expectProblem(await api.fetch(`/api/webhooks?q=${'x'.repeat(201)}`, { token }), 400, {
      errors: { q: ['q must be at most 200 characters'] },
    });
    expect((await api.fetch('/api/webhooks?q=', { token })).status).toBe(200);
  });

  it('counts a common word up to a cap, and refuses a search that runs past WEBHOOK_SEARCH_TIMEOUT, naming the fix', async () => {
    const registration = await seedRegistration(api.db.knex, {
      partyId: world.pmc.id,
      targetUrl: 'http://127.0.0.1:9/hook',
      events: [{ entityName: 'Property', type: 2 }],
    });
    // 20,000 payloads that all contain the street: the exact count rechecks every one
    await seedBacklog(
      api.db.knex,
      { partyId: world.pmc.id, registrationId: registration.id, eventId: registration.eventIds[0]! },
      20_000,
    );
    const config = api.deps.config as { WEBHOOK_SEARCH_TIMEOUT: number };
    const before = config.WEBHOOK_SEARCH_TIMEOUT;
    config.WEBHOOK_SEARCH_TIMEOUT = 1;
    try {
      await expectProblem(
        await api.fetch(`/api/webhooks?q=${encodeURIComponent('Benchmarkstraße')}`, {
          token: world.pmc.full.token,
        }),
        400,
        {
          detail:
            'The search "Benchmarkstraße" matches too many webhooks to count within 0.001 s: narrow it with a ' +
            'longer text, or with the registration, state or creation time filters',
        },
      );
    } finally {
      config.WEBHOOK_SEARCH_TIMEOUT = before;
    }
    // the connection it ran on is back to normal: the next search answers
    const page = await readJson<Page<WebhookRead>>(
      await api.fetch(`/api/webhooks?q=${encodeURIComponent('Bench property 19999')}&PageSize=1`, {
        token: world.pmc.full.token,
      }),
    );
    expect(page).toMatchObject({ totalCount: 1, totalCountCapped: false });

    // a word in every one of the 20,000 payloads: counted up to the cap, and said so
    const common = await readJson<Page<WebhookRead>>(
      await api.fetch(`/api/webhooks?q=${encodeURIComponent('benchmarkstr')}`, {
        token: world.pmc.full.token,
      }),
    );
    expect(common).toMatchObject({
      totalCount: WEBHOOK_SEARCH_COUNT_CAP,
      totalCountCapped: true,
      totalPages: WEBHOOK_SEARCH_COUNT_CAP / 20,
      hasNextPage: true,
    });
    expect(common.items).toHaveLength(20);
    // without a search the count is exact, as before
    const all = await readJson<Page<WebhookRead>>(
      await api.fetch(`/api/webhooks?registrationId=${registration.id}&PageSize=1`, {
        token: world.pmc.full.token,
      }),
    );
    expect(all.totalCount).toBe(20_000);
    expect(all.totalCountCapped).toBeUndefined();
  });
});
