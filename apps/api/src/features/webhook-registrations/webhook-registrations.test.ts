import {
  FINAL_WEBHOOK_STATES,
  WEBHOOK_ENTITY_NAMES,
  WebhookState,
  type WebhookRegistrationRead,
} from '@platform/shared';
import { setWebhookState } from '@platform/testkit';
import { beforeAll, describe, expect, it } from 'vitest';
import { expectProblem, readJson } from '../../../tests/support/http';
import { buildAccount, buildParty, expectAccessRules, login, useTestApi } from '../../../tests/support/api';
import {
  createProperty,
  groupOf,
  patchProperty,
  postRegistration,
  register,
  registrationBody,
  webhooksOf,
} from '../../../tests/support/webhooks';

const { Created, Retrying, Successful, Failed, Aborted, Pending, Resolved } = WebhookState;

const { api, world } = useTestApi({ world: true, truncateWebhooks: true });

const counts = async () => {
  const result: Record<string, number> = {};
  for (const table of ['webhook_registrations', 'webhook_events', 'entity_changes', 'webhooks']) {
    result[table] = Number((await api.db.knex(table).count({ n: '*' }))[0]!.n);
  }
  return result;
};

describe('POST /api/webhook-registrations', () => {
  it('creates the registration with one event row per enabled event, and shows the signing secret once', async () => {
    const token = world.pmc.full.token;
    const created = await register(api, token, {
      enabledEvents: [
        { entityName: 'inquiry', type: 1 },
        { entityName: 'Unit', type: 3 },
      ],
      shouldGroup: true,
      ShouldGroupContinueAfterFail: true,
    });
    expect(created).toEqual({
      id: expect.any(Number),
      partyId: world.pmc.id,
      partyName: world.pmc.name,
      targetUrl: 'https://hooks.example.com/platform',
      enabledEvents: [
        {
          id: expect.any(Number),
          entityName: 'Inquiry',
          type: 1,
          created: expect.any(String),
          lastModified: null,
          deleted: null,
        },
        {
          id: expect.any(Number),
          entityName: 'Unit',
          type: 3,
          created: expect.any(String),
          lastModified: null,
          deleted: null,
        },
      ],
      shouldGroup: true,
      shouldGroupContinueAfterFail: true,
      targetAuthorization: { type: 0 },
      createdByAccountId: world.pmc.full.id,
      created: expect.any(String),
      lastModified: null,
      deleted: null,
      status: 'active',
      disabledReason: null,
      statusChanged: null,
      rateLimit: null,
      signingSecret: expect.stringMatching(/^whsec_[A-Za-z0-9+/]+={0,2}$/),
    });
    expect(Buffer.from(created.signingSecret.slice('whsec_'.length), 'base64')).toHaveLength(32);

    const row = await api.db.knex('webhook_registrations').where({ id: created.id }).first();
    expect(row).toMatchObject({ party_id: world.pmc.id, auth_type: 0, auth_credentials: null });
    // stored sealed, and it opens to what was shown
    expect(row.signing_secret).not.toContain(created.signingSecret.slice(6));
    expect(api.deps.secrets.open(row.signing_secret)).toBe(created.signingSecret);
    const events = await api.db.knex('webhook_events').where({ registration_id: created.id }).orderBy('id');
    expect(events.map((e) => [e.entity_name, e.type])).toEqual([
      ['Inquiry', 1],
      ['Unit', 3],
    ]);

    // two registrations never share a secret
    const second = await register(api, token);
    expect(second.signingSecret).not.toBe(created.signingSecret);
  });

  it('stores Basic and API-key credentials sealed and never returns them or the secret again', async () => {
    const token = world.pmc.full.token;
    const basic = await register(api, token, {
      targetAuthorization: { type: 1, username: 'hook-user', password: 'Basic-Secret-77' },
    });
    const apiKey = await register(api, token, {
      targetAuthorization: { type: 4, apiKey: 'key-Abc123-Secret' },
    });
    expect(basic.targetAuthorization).toEqual({ type: 1 });
    expect(apiKey.targetAuthorization).toEqual({ type: 4 });
    for (const created of [basic, apiKey]) {
      expect(JSON.stringify(created)).not.toMatch(/Basic-Secret-77|key-Abc123-Secret/);
    }

    const rows = await api.db
      .knex('webhook_registrations')
      .whereIn('id', [basic.id, apiKey.id])
      .orderBy('id');
    expect(rows[0].auth_credentials).not.toContain('Basic-Secret-77');
    expect(JSON.parse(api.deps.secrets.open(rows[0].auth_credentials))).toEqual({
      username: 'hook-user',
      password: 'Basic-Secret-77',
    });
    expect(JSON.parse(api.deps.secrets.open(rows[1].auth_credentials))).toEqual({
      apiKey: 'key-Abc123-Secret',
    });

    const secrets = [
      'Basic-Secret-77',
      'key-Abc123-Secret',
      basic.signingSecret,
      apiKey.signingSecret,
      basic.signingSecret.slice(6),
      rows[0].auth_credentials,
      rows[0].signing_secret,
      rows[1].auth_credentials,
    ];
    const responses = [
      await api.fetch(`/api/webhook-registrations/${basic.id}`, { token }),
      await api.fetch(`/api/webhook-registrations/${apiKey.id}`, { token }),
      await api.fetch('/api/webhook-registrations', { token }),
      await api.fetch('/api/webhook-registrations/search', { method: 'POST', token, json: {} }),
      await api.fetch(`/api/webhook-registrations/${basic.id}`, {
        method: 'PATCH',
        token,
        json: { targetUrl: 'https://hooks.example.com/moved' },
      }),
    ];
    for (const response of responses) {
      const text = await response.text();
      expect(response.status, text).toBe(200);
      for (const secret of secrets) expect(text).not.toContain(secret);
      expect(text).not.toMatch(/signingSecret|password|apiKey|credentials/i);
    }
  });

  it('registers for another party only as Admin, and only for Admin or PMC parties', async () => {
    const forPmc = await register(api, world.admin.full.token, { partyId: world.pmc.id });
    expect(forPmc).toMatchObject({ partyId: world.pmc.id, partyName: world.pmc.name });
    expect(await register(api, world.admin.full.token)).toMatchObject({
      partyId: world.admin.id,
      partyName: world.admin.name,
    });
    // a PMC naming its own party is fine, any other party is refused
    expect((await register(api, world.pmc.full.token, { partyId: world.pmc.id })).partyId).toBe(world.pmc.id);
    const before = await counts();
    for (const [token, partyId, message] of [
      [world.pmc.full.token, world.otherPmc.id, /Only an Admin/],
      [world.pmc.full.token, world.contractor.id, /Only an Admin/],
      [world.admin.full.token, world.contractor.id, /type 5; only Admin \(1\) and Property Management/],
      [world.admin.full.token, 2147483647, /does not exist/],
    ] as const) {
      const problem = await expectProblem(await postRegistration(api, token, { partyId }), 400);
      expect(problem.errors?.partyId?.[0]).toMatch(message);
    }
    expect(await counts()).toEqual(before);
  });

  it('refuses bad input with a 400 naming the field and what is supported, and writes nothing', async () => {
    const token = world.pmc.full.token;
    const before = await counts();
    const supported = WEBHOOK_ENTITY_NAMES.join(', ');
    const cases: [Record<string, unknown>, string, RegExp][] = [
      [{ targetUrl: '/relative/hook' }, 'targetUrl', /absolute http or https/],
      [{ targetUrl: 'ftp://hooks.example.com/x' }, 'targetUrl', /http or https, not ftp/],
      [{ targetUrl: 'https://user:pw@hooks.example.com/x' }, 'targetUrl', /credentials/],
      [{ targetUrl: `https://hooks.example.com/${'a'.repeat(2048)}` }, 'targetUrl', /2048/],
      [{ targetUrl: 'https://hooks.example.com/x#frag' }, 'targetUrl', /fragment/],
      [{ targetUrl: 42 }, 'targetUrl', /string/],
      [{ targetUrl: undefined }, 'targetUrl', /Required/],
      [{ enabledEvents: [] }, 'enabledEvents', /at least one/],
      [{ enabledEvents: undefined }, 'enabledEvents', /Required/],
      [{ enabledEvents: [{ entityName: 'Unit', type: 4 }] }, 'enabledEvents.0.type', /4 \(ReplaceRelation\)/],
      [{ enabledEvents: [{ entityName: 'Unit', type: 6 }] }, 'enabledEvents.0.type', /unsupported/],
      [{ enabledEvents: [{ entityName: 'Unit', type: 0 }] }, 'enabledEvents.0.type', /must be 1 \(Created\)/],
      [
        { enabledEvents: [{ entityName: 'Account', type: 1 }] },
        'enabledEvents.0.entityName',
        /Account cannot be subscribed to/,
      ],
      [
        { enabledEvents: [{ entityName: 'UserTask', type: 2 }] },
        'enabledEvents.0.entityName',
        /UserTask cannot be subscribed to/,
      ],
      [
        { enabledEvents: [{ entityName: 'Spaceship', type: 2 }] },
        'enabledEvents.0.entityName',
        /Unknown entity name "Spaceship"/,
      ],
      [
        {
          enabledEvents: [
            { entityName: 'Unit', type: 1 },
            { entityName: 'unit', type: 1 },
          ],
        },
        'enabledEvents.1',
        /Duplicate of enabledEvents.0/,
      ],
      [
        { enabledEvents: [{ entityName: 'Unit', type: 1, extra: 1 }] },
        'enabledEvents.0.extra',
        /Unknown field/,
      ],
      [{ targetAuthorization: undefined }, 'targetAuthorization', /Required/],
      [
        { targetAuthorization: { type: 5 } },
        'targetAuthorization.type',
        /0 \(No Auth\).*4 \(Target API Token\)/,
      ],
      [{ targetAuthorization: { type: 1, username: 'u' } }, 'targetAuthorization.password', /Required for/],
      [
        { targetAuthorization: { type: 1, username: 'a:b', password: 'p' } },
        'targetAuthorization.username',
        /colon/,
      ],
      [
        { targetAuthorization: { type: 1, username: 'a\nb', password: 'p' } },
        'targetAuthorization.username',
        /control characters/,
      ],
      [
        { targetAuthorization: { type: 4 } },
        'targetAuthorization.apiKey',
        /Required for authorization type 4/,
      ],
      [
        { targetAuthorization: { type: 4, apiKey: 'has space' } },
        'targetAuthorization.apiKey',
        /visible ASCII/,
      ],
      [
        { targetAuthorization: { type: 0, apiKey: 'k' } },
        'targetAuthorization.apiKey',
        /Not applicable to authorization type 0; only type 4/,
      ],
      [
        { targetAuthorization: { type: 2, username: 'u', password: 'p' } },
        'targetAuthorization.username',
        /Not applicable to authorization type 2; only type 1/,
      ],
      [
        { targetAuthorization: { type: 4, apiKey: 'k', password: 'p' } },
        'targetAuthorization.password',
        /Not applicable/,
      ],
      [{ shouldGroupContinueAfterFail: true }, 'shouldGroupContinueAfterFail', /set shouldGroup too/],
      [{ shouldGroup: 'yes' }, 'shouldGroup', /boolean/],
      [{ rateLimit: 0 }, 'rateLimit', /at least 1 delivery per second/],
      [{ rateLimit: 10_001 }, 'rateLimit', /at most 10000 deliveries per second/],
      [{ rateLimit: 2.5 }, 'rateLimit', /whole number/],
      [{ rateLimit: '10' }, 'rateLimit', /number/],
      [{ unknown: 1 }, 'unknown', /Unknown field/],
    ];
    for (const [overrides, field, message] of cases) {
      const problem = await expectProblem(await postRegistration(api, token, overrides), 400);
      expect(
        problem.errors?.[field]?.join(' | '),
        `${JSON.stringify(overrides)}: ${JSON.stringify(problem)}`,
      ).toMatch(message);
      if (field === 'enabledEvents.0.entityName') expect(problem.errors?.[field]?.[0]).toContain(supported);
    }
    expect(await counts()).toEqual(before);
  });

  it('accepts private targets by default (tests run outside production)', async () => {
    const created = await register(api, world.pmc.full.token, { targetUrl: 'http://127.0.0.1:9/hook' });
    expect(created.targetUrl).toBe('http://127.0.0.1:9/hook');
  });
});

describe('private targets refused (ALLOW_PRIVATE_TARGETS=false)', () => {
  const { api: strict } = useTestApi({ config: { ALLOW_PRIVATE_TARGETS: 'false' } });
  let token: string;
  beforeAll(async () => {
    const party = await buildParty(strict.deps, { type: 2 });
    const account = await buildAccount(strict.deps, { partyId: party.id });
    token = (await login(strict, account.email)).accessToken;
  });

  it('refuses literal private, loopback and link-local addresses and localhost, on create and patch', async () => {
    const refused = [
      'http://localhost:8080/hook',
      'https://LOCALHOST./hook',
      'http://api.localhost/hook',
      'http://127.0.0.1/hook',
      'http://2130706433/hook',
      'http://10.1.2.3/hook',
      'http://172.20.0.1/hook',
      'http://192.168.1.10/hook',
      'http://169.254.169.254/latest/meta-data',
      'http://100.64.0.1/hook',
      'http://0.0.0.0/hook',
      'http://[::1]/hook',
      'http://[fe80::1]/hook',
      'http://[fd00::1]/hook',
      'http://[::ffff:127.0.0.1]/hook',
    ];
    for (const targetUrl of refused) {
      const problem = await expectProblem(await postRegistration(strict, token, { targetUrl }), 400);
      expect(problem.errors?.targetUrl?.[0], targetUrl).toMatch(/private targets are not allowed/);
    }
    expect(await strict.db.knex('webhook_registrations').count({ n: '*' })).toEqual([{ n: 0 }]);

    const publicTarget = await register(strict, token, { targetUrl: 'https://8.8.8.8/hook' });
    const named = await register(strict, token, { targetUrl: 'https://hooks.example.com/x' });
    expect([publicTarget.targetUrl, named.targetUrl]).toEqual([
      'https://8.8.8.8/hook',
      'https://hooks.example.com/x',
    ]);
    const problem = await expectProblem(
      await strict.fetch(`/api/webhook-registrations/${named.id}`, {
        method: 'PATCH',
        token,
        json: { targetUrl: 'http://192.168.0.1/x' },
      }),
      400,
    );
    expect(problem.errors).toHaveProperty('targetUrl');
    const row = await strict.db.knex('webhook_registrations').where({ id: named.id }).first('target_url');
    expect(row.target_url).toBe('https://hooks.example.com/x');
  });
});

describe('reading webhook registrations', () => {
  it('lists, searches and reads within the caller’s scope', async () => {
    const mine = await register(api, world.pmc.full.token, { targetUrl: 'https://a.example.com/one' });
    const grouped = await register(api, world.pmc.full.token, {
      targetUrl: 'https://b.example.com/two',
      shouldGroup: true,
    });
    const foreign = await register(api, world.otherPmc.full.token, { targetUrl: 'https://a.example.com/x' });
    const token = world.pmc.full.token;
    const { signingSecret: _a, ...mineRead } = mine;

    expect(await readJson(await api.fetch(`/api/webhook-registrations/${mine.id}`, { token }))).toEqual(
      mineRead,
    );

    const list = await readJson<{ items: WebhookRegistrationRead[]; totalCount: number }>(
      await api.fetch('/api/webhook-registrations?SortByAttributeName=targetUrl&AscendingOrder=false', {
        token,
      }),
    );
    expect(list.items.map((r) => r.id)).toEqual([grouped.id, mine.id]);
    expect(list.totalCount).toBe(2);
    expect(list.items[1]).toEqual(mineRead);

    const search = async (body: unknown, as = token) =>
      (
        await readJson<{ items: WebhookRegistrationRead[] }>(
          await api.fetch('/api/webhook-registrations/search', { method: 'POST', token: as, json: body }),
        )
      ).items.map((r) => r.id);
    expect(
      await search({ filters: [{ attribute: 'targetUrl', operator: 'contains', value: 'A.EXAMPLE' }] }),
    ).toEqual([mine.id]);
    expect(
      await search({
        filters: [{ attribute: 'targetUrl', operator: 'eq', value: 'https://b.example.com/two' }],
      }),
    ).toEqual([grouped.id]);
    expect(await search({ filters: [{ attribute: 'shouldGroup', operator: 'eq', value: true }] })).toEqual([
      grouped.id,
    ]);
    expect(
      await search({
        filters: [{ attribute: 'created', operator: 'gte', value: '2000-01-01T00:00:00Z' }],
        sort: [{ attribute: 'id', ascending: false }],
      }),
    ).toEqual([grouped.id, mine.id]);
    // Admin sees every party's registrations and can search by party
    expect(
      await search(
        { filters: [{ attribute: 'partyId', operator: 'eq', value: world.otherPmc.id }] },
        world.admin.full.token,
      ),
    ).toEqual([foreign.id]);
    expect(
      await search(
        { filters: [{ attribute: 'targetUrl', operator: 'contains', value: 'a.example' }] },
        world.admin.full.token,
      ),
    ).toEqual([mine.id, foreign.id]);
    // each names its own party, in the list and read alike
    const asAdmin = await readJson<{ items: WebhookRegistrationRead[] }>(
      await api.fetch('/api/webhook-registrations', { token: world.admin.full.token }),
    );
    expect(asAdmin.items.map((r) => [r.id, r.partyName])).toEqual([
      [mine.id, world.pmc.name],
      [grouped.id, world.pmc.name],
      [foreign.id, world.otherPmc.name],
    ]);
    expect(
      await readJson(
        await api.fetch(`/api/webhook-registrations/${foreign.id}`, { token: world.admin.full.token }),
      ),
    ).toMatchObject({ partyId: world.otherPmc.id, partyName: world.otherPmc.name });

    await expectProblem(await api.fetch(`/api/webhook-registrations/${foreign.id}`, { token }), 404);
    await expectProblem(
      await api.fetch('/api/webhook-registrations?SortByAttributeName=signingSecret', { token }),
      400,
      { errors: { SortByAttributeName: [expect.stringContaining('allowed: id, partyId, targetUrl')] } },
    );
    await expectProblem(
      await api.fetch('/api/webhook-registrations/search', {
        method: 'POST',
        token,
        json: { filters: [{ attribute: 'signingSecret', operator: 'eq', value: 'x' }] },
      }),
      400,
    );
  });

  it('applies the access rules of every operation (others than Admin and PMC: 403)', async () => {
    const own = async (caller: { full: { token: string } }) =>
      `/api/webhook-registrations/${(await register(api, caller.full.token)).id}`;
    const inScope = (caller: { type: number; full: { token: string } }) =>
      caller.type === 1 || caller.type === 2 ? own(caller) : '/api/webhook-registrations/1';
    const cases = [
      { method: 'POST', path: '/api/webhook-registrations', body: registrationBody(), action: 'Create' },
      { method: 'GET', path: '/api/webhook-registrations', action: 'Read' },
      { method: 'POST', path: '/api/webhook-registrations/search', body: {}, action: 'Read' },
      { method: 'GET', path: inScope, action: 'Read' },
      {
        method: 'PATCH',
        path: inScope,
        body: { targetUrl: 'https://hooks.example.com/new' },
        action: 'Update',
      },
      { method: 'DELETE', path: inScope, action: 'Delete' },
    ] as const;
    for (const { action, ...rule } of cases) {
      await expectAccessRules(api, world, {
        ...rule,
        allow: [1, 2],
        permission: `WebhookRegistration.${action}`,
      });
    }
  });
});

describe('PATCH /api/webhook-registrations/{id}', () => {
  it('changes targetUrl only', async () => {
    const token = world.pmc.full.token;
    const created = await register(api, token, { shouldGroup: true });
    const patched = await readJson<WebhookRegistrationRead>(
      await api.fetch(`/api/webhook-registrations/${created.id}`, {
        method: 'PATCH',
        token,
        json: { TargetUrl: 'https://hooks.example.com/moved' },
      }),
    );
    const { signingSecret: _s, ...read } = created;
    expect(patched).toEqual({
      ...read,
      targetUrl: 'https://hooks.example.com/moved',
      lastModified: expect.any(String),
    });
    // an empty patch changes nothing
    expect(
      await readJson(
        await api.fetch(`/api/webhook-registrations/${created.id}`, { method: 'PATCH', token, json: {} }),
      ),
    ).toEqual(patched);
  });

  it('sets, changes and clears rateLimit; the endpoint takes the lowest of its registrations’ limits', async () => {
    const token = world.pmc.full.token;
    const url = 'https://hooks.example.com/limited';
    const created = await register(api, token, { targetUrl: url, rateLimit: 50 });
    expect(created.rateLimit).toBe(50);
    const endpointLimit = async () => {
      const { target_id: targetId } = await api.db
        .knex('webhook_registrations')
        .where({ id: created.id })
        .first('target_id');
      return (await api.db.knex('webhook_targets').where({ id: targetId }).first('rate_limit')).rate_limit;
    };
    expect(await endpointLimit()).toBe(50);
    const patch = (id: number, json: Record<string, unknown>) =>
      api.fetch(`/api/webhook-registrations/${id}`, { method: 'PATCH', token, json });

    const changed = await readJson<WebhookRegistrationRead>(await patch(created.id, { RateLimit: 10 }));
    expect(changed).toMatchObject({ rateLimit: 10, targetUrl: url });
    expect(
      await readJson(await api.fetch(`/api/webhook-registrations/${created.id}`, { token })),
    ).toMatchObject({
      rateLimit: 10,
    });
    expect(await endpointLimit()).toBe(10);
    // a second registration of the party at the same URL shares the endpoint: the lower limit holds it
    const sibling = await register(api, token, { targetUrl: url, rateLimit: 4 });
    expect(await endpointLimit()).toBe(4);
    await patch(sibling.id, { rateLimit: null });
    expect(await endpointLimit()).toBe(10);
    await api.fetch(`/api/webhook-registrations/${sibling.id}`, { method: 'DELETE', token });
    const cleared = await readJson<WebhookRegistrationRead>(await patch(created.id, { rateLimit: null }));
    expect(cleared.rateLimit).toBeNull();
    expect(await endpointLimit()).toBeNull();

    // bad values: a 400 naming the field, nothing written
    const before = await api.db.knex('webhook_registrations').where({ id: created.id }).first();
    for (const [value, message] of [
      [0, /at least 1/],
      [-3, /at least 1/],
      [10_001, /at most 10000/],
      [0.5, /whole number/],
      ['fast', /number/],
    ] as const) {
      const problem = await expectProblem(await patch(created.id, { rateLimit: value }), 400);
      expect(problem.errors?.rateLimit?.join(' | '), JSON.stringify(problem)).toMatch(message);
    }
    expect(await api.db.knex('webhook_registrations').where({ id: created.id }).first()).toEqual(before);
  });

  it('refuses any change of events, authorization, grouping or party with the rule of docs/webhooks.md#registrations', async () => {
    const token = world.pmc.full.token;
    const created = await register(api, token);
    const before = await api.db.knex('webhook_registrations').where({ id: created.id }).first();
    for (const [patch, field] of [
      [{ enabledEvents: [{ entityName: 'Unit', type: 1 }] }, 'enabledEvents'],
      [{ targetAuthorization: { type: 4, apiKey: 'k' } }, 'targetAuthorization'],
      [{ shouldGroup: true }, 'shouldGroup'],
      [{ ShouldGroupContinueAfterFail: false }, 'shouldGroupContinueAfterFail'],
      [{ partyId: world.pmc.id }, 'partyId'],
      [{ targetUrl: 'https://hooks.example.com/x', enabledEvents: null }, 'enabledEvents'],
    ] as const) {
      const problem = await expectProblem(
        await api.fetch(`/api/webhook-registrations/${created.id}`, { method: 'PATCH', token, json: patch }),
        400,
      );
      expect(problem.errors?.[field]?.[0]).toBe(
        `${field} cannot be changed: create a new registration and delete the old one`,
      );
    }
    for (const [patch, field] of [
      [{ targetUrl: null }, 'targetUrl'],
      [{ targetUrl: 'mailto:x@example.com' }, 'targetUrl'],
      [{ signingSecret: 'whsec_x' }, 'signingSecret'],
    ] as const) {
      const problem = await expectProblem(
        await api.fetch(`/api/webhook-registrations/${created.id}`, { method: 'PATCH', token, json: patch }),
        400,
      );
      expect(problem.errors).toHaveProperty(field);
    }
    expect(await api.db.knex('webhook_registrations').where({ id: created.id }).first()).toEqual(before);
    expect(await api.db.knex('webhook_events').where({ registration_id: created.id })).toHaveLength(3);
  });

  it('answers 404 for another party’s or a deleted registration', async () => {
    const foreign = await register(api, world.otherPmc.full.token);
    const deleted = await register(api, world.pmc.full.token);
    await api.fetch(`/api/webhook-registrations/${deleted.id}`, {
      method: 'DELETE',
      token: world.pmc.full.token,
    });
    for (const id of [foreign.id, deleted.id]) {
      await expectProblem(
        await api.fetch(`/api/webhook-registrations/${id}`, {
          method: 'PATCH',
          token: world.pmc.full.token,
          json: { targetUrl: 'https://hooks.example.com/stolen' },
        }),
        404,
      );
    }
    const row = await api.db.knex('webhook_registrations').where({ id: foreign.id }).first('target_url');
    expect(row.target_url).toBe('https://hooks.example.com/platform');
  });
});

describe('DELETE /api/webhook-registrations/{id}', () => {
  it('soft-deletes the registration and its events and aborts its undelivered webhooks in one go', async () => {
    const token = world.pmc.full.token;
    const doomed = await register(api, token);
    const grouped = await register(api, token, { shouldGroup: true });
    const kept = await register(api, token);
    const foreign = await register(api, world.otherPmc.full.token);
    const propertyId = await createProperty(api, token);
    for (let i = 1; i <= 6; i++) await patchProperty(api, token, propertyId, { notes: `change ${i}` });
    await createProperty(api, world.otherPmc.full.token);

    // the doomed registration's 7 webhooks in every state, as deliveries would leave them
    const doomedHooks = await webhooksOf(api, doomed.id);
    expect(doomedHooks).toHaveLength(7);
    const completedEarlier = new Date('2026-01-01T00:00:00Z');
    const states = [Created, Retrying, Successful, Failed, Aborted, Pending, Resolved];
    for (const [index, state] of states.entries()) {
      const id = doomedHooks[index]!.id;
      await setWebhookState(api.db.knex, id, state, {
        completedAt: FINAL_WEBHOOK_STATES.includes(state) ? completedEarlier : null,
      });
      await api.db
        .knex('webhooks')
        .where({ id })
        .update({ locked_by: state === Retrying ? 'dispatcher-1' : null });
    }
    const groupedBefore = await webhooksOf(api, grouped.id);
    expect(groupedBefore.map((w) => w.state)).toEqual([
      Created,
      Pending,
      Pending,
      Pending,
      Pending,
      Pending,
      Pending,
    ]);
    const untouched = async () => ({
      kept: await webhooksOf(api, kept.id),
      foreign: await webhooksOf(api, foreign.id),
    });
    const otherBefore = await untouched();

    const response = await api.fetch(`/api/webhook-registrations/${doomed.id}`, { method: 'DELETE', token });
    expect(response.status).toBe(204);
    expect(await response.text()).toBe('');
    const groupedResponse = await api.fetch(`/api/webhook-registrations/${grouped.id}`, {
      method: 'DELETE',
      token,
    });
    expect(groupedResponse.status).toBe(204);

    const now = api.clock.now().toISOString();
    const after = await webhooksOf(api, doomed.id);
    // the undelivered ones aborted, the final ones (Successful, Aborted, Resolved) as they were
    const doomedAfter = [Aborted, Aborted, Successful, Aborted, Aborted, Aborted, Resolved];
    expect(after.map((w) => w.state)).toEqual(doomedAfter);
    after.forEach((webhook, index) => {
      const wasFinal = FINAL_WEBHOOK_STATES.includes(states[index]!);
      expect(webhook.completed_at?.toISOString(), `webhook ${index}`).toBe(
        wasFinal ? completedEarlier.toISOString() : now,
      );
      expect(webhook.locked_by).toBeNull();
    });
    // the grouped one: head and pendings all aborted, its group holds nothing open
    expect((await webhooksOf(api, grouped.id)).map((w) => w.state)).toEqual(Array(7).fill(Aborted));
    expect(await groupOf(api, grouped.id, `Property:${propertyId}`)).toEqual({ next_seq: 7, open_count: 0 });
    expect(await untouched()).toEqual(otherBefore);

    const registration = await api.db.knex('webhook_registrations').where({ id: doomed.id }).first();
    expect(registration.deleted?.toISOString()).toBe(now);
    const events = await api.db.knex('webhook_events').where({ registration_id: doomed.id });
    expect(events.map((e) => e.deleted?.toISOString())).toEqual([now, now, now]);

    // gone for reads, lists and a second delete; later changes no longer reach it
    await expectProblem(await api.fetch(`/api/webhook-registrations/${doomed.id}`, { token }), 404);
    await expectProblem(
      await api.fetch(`/api/webhook-registrations/${doomed.id}`, { method: 'DELETE', token }),
      404,
    );
    const list = await readJson<{ items: { id: number }[] }>(
      await api.fetch('/api/webhook-registrations', { token }),
    );
    expect(list.items.map((r) => r.id)).toEqual([kept.id]);
    // its webhooks stay readable for operators, as history
    const history = await readJson<{ items: { id: number; state: WebhookState }[] }>(
      await api.fetch(`/api/webhooks?registrationId=${doomed.id}`, { token }),
    );
    expect(history.items.map((w) => w.state)).toEqual(doomedAfter);
    await patchProperty(api, token, propertyId, { notes: 'after delete' });
    expect(await webhooksOf(api, doomed.id)).toHaveLength(7);
    expect(await webhooksOf(api, grouped.id)).toHaveLength(7);
    expect(await webhooksOf(api, kept.id)).toHaveLength(8);
  });

  it('answers 404 for another party’s registration and leaves it alone', async () => {
    const foreign = await register(api, world.otherPmc.full.token);
    await createProperty(api, world.otherPmc.full.token);
    await expectProblem(
      await api.fetch(`/api/webhook-registrations/${foreign.id}`, {
        method: 'DELETE',
        token: world.pmc.full.token,
      }),
      404,
    );
    expect((await api.db.knex('webhook_registrations').where({ id: foreign.id }).first()).deleted).toBeNull();
    expect((await webhooksOf(api, foreign.id)).map((w) => w.state)).toEqual([Created]);
  });
});
