import {
  ConferenceRead,
  ConferenceSettingsRead,
  ConferenceVoteRead,
  MandateRead,
  ConferenceRoleRead,
  PredefinedVoteRead,
  ResolutionOptionRead,
  ResolutionOptionTemplateRead,
  ResolutionRead,
  ResolutionTemplateRead,
  TopicNoteRead,
  TopicRead,
  TopicTemplateRead,
  VotingSessionRead,
  WebhookState,
} from '@platform/shared';
import { beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { expectProblem, writableCounts } from '../../tests/support/http';
import { buildAccount, buildParty, login, type World, useTestApi } from '../../tests/support/api';
import { RESOURCES } from './index';
import {
  capturedChanges,
  countRows,
  expectOutOfScope,
  expectRegistryAccessRules,
  expectRolledBack,
  lastChangeId,
  postOk,
  requestOk,
  resetCapture,
  subscribe,
  webhookRows,
} from '../../tests/support/resources';

const { api, world } = useTestApi({ world: true });

type Entity = Record<string, unknown> & { id: number };

/** A PMC writing conference data, with an owner (a User party it manages) and a property. */
interface Side {
  token: string;
  accountId: number;
  partyId: number;
  ownerId: number;
  propertyId: number;
}
let pmc: Side;
let otherPmc: Side;

const CONFERENCE_TABLES = [
  'conferences',
  'conference_settings',
  'topics',
  'topic_notes',
  'resolutions',
  'resolution_options',
  'voting_sessions',
  'mandates',
  'conference_votes',
  'predefined_votes',
  'topic_templates',
  'resolution_templates',
  'resolution_option_templates',
];

async function call(method: string, path: string, token: string, json?: unknown): Promise<Response> {
  return api.fetch(path, { method, token, ...(json === undefined ? {} : { json }) });
}

/** Row counts of every table a conference write could touch, with the identity tables. */
async function allCounts(): Promise<Record<string, number>> {
  const counts = await writableCounts(api);
  for (const table of [...CONFERENCE_TABLES, 'entity_changes', 'webhooks']) {
    counts[table] = await countRows(api, table);
  }
  return counts;
}

/** A conference of `side` with one topic, one resolution and its options Yes and No. */
async function agenda(side: Side) {
  const conference = await postOk(api, '/api/conferences', side.token, {
    propertyId: side.propertyId,
    title: 'Eigentümerversammlung',
  });
  const topic = await postOk(api, '/api/topics', side.token, {
    conferenceId: conference.id,
    title: 'Dachsanierung',
  });
  const resolution = await postOk(api, '/api/resolutions', side.token, {
    topicId: topic.id,
    title: 'Sanierung beauftragen',
  });
  const yes = await postOk(api, '/api/resolution-options', side.token, {
    resolutionId: resolution.id,
    label: 'Ja',
  });
  const no = await postOk(api, '/api/resolution-options', side.token, {
    resolutionId: resolution.id,
    label: 'Nein',
  });
  return { conference, topic, resolution, yes, no };
}

async function agendaWithSession(side: Side) {
  const tree = await agenda(side);
  const session = await postOk(api, '/api/voting-sessions', side.token, {
    conferenceId: tree.conference.id,
    resolutionId: tree.resolution.id,
  });
  return { ...tree, session };
}

/** What a table case needs to create, and then change, one row of a resource as `side`. */
interface Build {
  body: Record<string, unknown>;
  patch: Record<string, unknown>;
  /** What the new row shows beyond the body (defaults, derived fields). */
  created?: Record<string, unknown>;
  /** What the changed row shows; the patch itself when absent. */
  patched?: Record<string, unknown>;
}

interface Case {
  name: string;
  path: string;
  read: z.ZodObject;
  build(side: Side): Promise<Build>;
}

const CASES: Case[] = [
  {
    name: 'Conference',
    path: '/api/conferences',
    read: ConferenceRead,
    build: async (side) => ({
      body: {
        propertyId: side.propertyId,
        title: 'Eigentümerversammlung 2026',
        scheduledAt: '2026-03-05T17:00:00.000Z',
        location: 'Gemeindesaal',
      },
      created: { status: 'planned', notes: null },
      patch: { status: 'invited', location: null, notes: 'Einladung verschickt' },
    }),
  },
  {
    name: 'Settings',
    path: '/api/conference-settings',
    read: ConferenceSettingsRead,
    // a party of its own, since a party holds one live settings record
    build: async (side) => ({
      body: {
        partyId: (await buildParty(api.deps, { type: 7, managedByPartyId: side.partyId })).id,
        quorumPercent: 25,
        votingMethod: 'share',
      },
      created: { defaultDurationMinutes: 120, allowProxyVoting: true, invitationLeadDays: 21 },
      patch: { allowProxyVoting: false, invitationLeadDays: 14 },
    }),
  },
  {
    name: 'Topic',
    path: '/api/topics',
    read: TopicRead,
    build: async (side) => {
      const conference = await postOk(api, '/api/conferences', side.token, {
        propertyId: side.propertyId,
        title: 'EV',
      });
      return {
        body: { conferenceId: conference.id, title: 'Wirtschaftsplan 2026', description: 'Beschluss' },
        created: { position: 1 },
        patch: { title: 'Wirtschaftsplan', position: 3, description: null },
      };
    },
  },
  {
    name: 'TopicNote',
    path: '/api/topic-notes',
    read: TopicNoteRead,
    build: async (side) => ({
      body: { topicId: (await agenda(side)).topic.id, text: 'Angebote liegen vor' },
      created: { authorAccountId: side.accountId },
      patch: { text: 'Drei Angebote liegen vor' },
    }),
  },
  {
    name: 'Resolution',
    path: '/api/resolutions',
    read: ResolutionRead,
    build: async (side) => ({
      body: { topicId: (await agenda(side)).topic.id, title: 'Wirtschaftsplan genehmigen', text: 'Die WEG…' },
      created: { majority: 'simple' },
      patch: { majority: 'qualified', text: null },
    }),
  },
  {
    name: 'ResolutionOption',
    path: '/api/resolution-options',
    read: ResolutionOptionRead,
    build: async (side) => ({
      body: { resolutionId: (await agenda(side)).resolution.id, label: 'Enthaltung' },
      created: { position: 3 },
      patch: { label: 'Enthaltung (ungültig)', position: 7 },
    }),
  },
  {
    name: 'VotingSession',
    path: '/api/voting-sessions',
    read: VotingSessionRead,
    build: async (side) => {
      const tree = await agenda(side);
      return {
        body: { conferenceId: tree.conference.id, resolutionId: tree.resolution.id },
        created: { status: 'open', openedAt: api.clock.now().toISOString(), closedAt: null },
        patch: { status: 'closed' },
        patched: { status: 'closed', closedAt: api.clock.now().toISOString() },
      };
    },
  },
  {
    name: 'Mandate',
    path: '/api/mandates',
    read: MandateRead,
    build: async (side) => ({
      body: {
        conferenceId: (await agenda(side)).conference.id,
        grantorPartyId: side.ownerId,
        proxyPartyId: side.partyId,
        validUntil: '2026-03-06T00:00:00.000Z',
      },
      created: { instructions: null },
      patch: { instructions: 'Ja zu TOP 1', validUntil: null },
    }),
  },
  {
    name: 'ConferenceRole',
    path: '/api/conference-roles',
    read: ConferenceRoleRead,
    build: async (side) => ({
      body: { conferenceId: (await agenda(side)).conference.id, holderPartyId: side.ownerId, role: 'chair' },
      patch: { role: 'minute_taker', holderPartyId: side.partyId },
    }),
  },
  {
    name: 'ConferenceVote',
    path: '/api/conference-votes',
    read: ConferenceVoteRead,
    build: async (side) => {
      const tree = await agendaWithSession(side);
      return {
        body: {
          votingSessionId: tree.session.id,
          resolutionOptionId: tree.yes.id,
          voterPartyId: side.ownerId,
          weight: 12.5,
        },
        patch: { resolutionOptionId: tree.no.id, weight: 1 },
      };
    },
  },
  {
    name: 'PredefinedVote',
    path: '/api/predefined-votes',
    read: PredefinedVoteRead,
    build: async (side) => {
      const tree = await agenda(side);
      return {
        body: {
          resolutionId: tree.resolution.id,
          resolutionOptionId: tree.yes.id,
          voterPartyId: side.ownerId,
        },
        patch: { resolutionOptionId: tree.no.id },
      };
    },
  },
  {
    name: 'TopicTemplate',
    path: '/api/topic-templates',
    read: TopicTemplateRead,
    build: async () => ({
      body: { title: 'Jahresabrechnung', description: 'Genehmigung der Jahresabrechnung' },
      patch: { description: null },
    }),
  },
  {
    name: 'ResolutionTemplate',
    path: '/api/resolution-templates',
    read: ResolutionTemplateRead,
    build: async () => ({
      body: { title: 'Verwalterbestellung', text: 'Die WEG bestellt…', majority: 'qualified' },
      patch: { majority: 'unanimous', title: 'Verwalterbestellung 2026' },
    }),
  },
  {
    name: 'ResolutionOptionTemplate',
    path: '/api/resolution-option-templates',
    read: ResolutionOptionTemplateRead,
    build: async (side) => {
      const template = await postOk(api, '/api/resolution-templates', side.token, { title: 'Vorlage' });
      return {
        body: { resolutionTemplateId: template.id, label: 'Ja' },
        created: { position: 1 },
        patch: { position: 5 },
      };
    },
  },
];

/** One row of `c` created by `side`, with the build it came from. */
async function createRow(c: Case, side: Side): Promise<{ row: Entity; build: Build }> {
  const build = await c.build(side);
  return { row: await postOk(api, c.path, side.token, build.body), build };
}

async function side(party: World['pmc'], owner: World['user']): Promise<Side> {
  const property = await postOk(api, '/api/properties', party.full.token, {
    name: 'Lindenhof',
    street: 'Lindenstraße',
    postalCode: '10969',
    city: 'Berlin',
  });
  return {
    token: party.full.token,
    accountId: party.full.id,
    partyId: party.id,
    ownerId: owner.id,
    propertyId: property.id,
  };
}

beforeAll(async () => {
  // every world party has the conference feature but Admin, which passes the gate without it
  await api.db
    .knex('parties')
    .whereIn(
      'id',
      Object.values(world)
        .filter((party) => party.type !== 1)
        .map((party) => party.id),
    )
    .update({ conference_enabled: true });
  pmc = await side(world.pmc, world.user);
  otherPmc = await side(world.otherPmc, world.otherUser);
});
beforeEach(() => resetCapture(api));

describe('conference resources: create, read, list, search, batch, update, delete with change capture', () => {
  for (const c of CASES) {
    it(`${c.name} through ${c.path}`, async () => {
      const token = pmc.token;
      const build = await c.build(pmc);
      const marker = await lastChangeId(api);
      const all = await subscribe(api, pmc.partyId, c.name);
      const updatesOnly = await subscribe(api, pmc.partyId, c.name, [2]);
      const foreign = await subscribe(api, otherPmc.partyId, c.name);

      const created = await postOk(api, c.path, token, build.body);
      expect(Object.keys(created)).toEqual(Object.keys(c.read.shape));
      z.strictObject(c.read.shape).parse(created);
      expect(created).toMatchObject({
        partyId: pmc.partyId,
        ...build.body,
        ...build.created,
        lastModified: null,
        deleted: null,
      });
      const path = `${c.path}/${created.id}`;
      expect(await requestOk(api, 'GET', path, token)).toEqual(created);

      const list = await requestOk<{ items: Entity[] }>(
        api,
        'GET',
        `${c.path}?SortByAttributeName=id&AscendingOrder=false&PageSize=100`,
        token,
      );
      expect(list.items[0]).toEqual(created);
      const search = await postOk<{ items: Entity[]; totalCount: number }>(api, `${c.path}/search`, token, {
        filters: [{ attribute: 'id', operator: 'eq', value: created.id }],
      });
      expect(search).toMatchObject({ items: [created], totalCount: 1 });
      expect(await postOk(api, `${c.path}/batch`, token, { ids: [created.id, 2147483647] })).toEqual([
        created,
      ]);

      const patched = await requestOk(api, 'PATCH', path, token, build.patch);
      expect(patched).toMatchObject({
        ...created,
        ...(build.patched ?? build.patch),
        lastModified: expect.any(String),
      });
      expect(await requestOk(api, 'GET', path, token)).toEqual(patched);

      const deleted = await call('DELETE', path, token);
      expect(deleted.status).toBe(204);
      await expectProblem(await call('GET', path, token), 404);

      const { rows: changes, summary } = await capturedChanges(api, marker);
      expect(summary).toEqual([
        [c.name, 1, created.id, pmc.partyId, pmc.accountId],
        [c.name, 2, created.id, pmc.partyId, pmc.accountId],
        [c.name, 3, created.id, pmc.partyId, pmc.accountId],
      ]);
      expect(changes[0].entity).toEqual(created);
      expect(changes[1].entity).toEqual(patched);
      expect(changes[2].entity).toEqual({
        ...patched,
        lastModified: expect.any(String),
        deleted: expect.any(String),
      });

      const webhooks = await webhookRows(api);
      expect(webhooks).toEqual([
        { registration_id: all, state: WebhookState.Created, entity_change_id: changes[0].id },
        { registration_id: all, state: WebhookState.Created, entity_change_id: changes[1].id },
        { registration_id: updatesOnly, state: WebhookState.Created, entity_change_id: changes[1].id },
        { registration_id: all, state: WebhookState.Created, entity_change_id: changes[2].id },
      ]);
      expect(webhooks.map((w) => w.registration_id)).not.toContain(foreign);
    });
  }
});

describe('conference resources: a write that fails at commit is rolled back', () => {
  for (const c of CASES) {
    it(`${c.name}: no row change, no entity change, no webhook`, async () => {
      const token = pmc.token;
      const fresh = await c.build(pmc);
      const { row, build } = await createRow(c, pmc);
      const path = `${c.path}/${row.id}`;
      await expectRolledBack(api, {
        partyId: pmc.partyId,
        entityName: c.name,
        table: RESOURCES.find((resource) => resource.name === c.name)!.table,
        writes: [
          () => call('POST', c.path, token, fresh.body),
          () => call('PATCH', path, token, build.patch),
          () => call('DELETE', path, token),
        ],
      });
      expect(await requestOk(api, 'GET', path, token)).toEqual(row);
    });
  }
});

describe('the conference feature gate', () => {
  it('refuses every operation of every conference resource to a party without the feature, Admin always passes', async () => {
    const party = await buildParty(api.deps, { type: 2 });
    const account = await buildAccount(api.deps, { partyId: party.id, permissions: 'all' });
    const gated = (await login(api, account.email)).accessToken;
    const rows = new Map<Case, { row: Entity; build: Build }>();
    for (const c of CASES) rows.set(c, await createRow(c, pmc));
    const before = await allCounts();

    for (const c of CASES) {
      const { row, build } = rows.get(c)!;
      for (const [method, path, body] of [
        ['GET', c.path],
        ['POST', `${c.path}/search`, {}],
        ['POST', `${c.path}/batch`, { ids: [row.id] }],
        ['GET', `${c.path}/${row.id}`],
        ['POST', c.path, build.body],
        ['PATCH', `${c.path}/${row.id}`, build.patch],
        ['DELETE', `${c.path}/${row.id}`],
      ] as const) {
        await expectProblem(await call(method, path, gated, body), 403, {
          detail: 'The conference feature is not enabled for your party',
        });
      }
      // Admin's party has the feature off too (see beforeAll)
      expect(await requestOk(api, 'GET', `${c.path}/${row.id}`, world.admin.full.token)).toEqual(row);
      expect((await call('GET', c.path, world.admin.full.token)).status).toBe(200);
    }
    expect(await allCounts()).toEqual(before);

    // the flag is read per request: granting it opens the resources
    await api.db.knex('parties').where({ id: party.id }).update({ conference_enabled: true });
    expect((await call('GET', '/api/conferences', gated)).status).toBe(200);
  });
});

describe('access rules', () => {
  it('applies the guards of every operation kind (Conference as the representative)', async () => {
    await expectRegistryAccessRules(api, world, '/api/conferences', 'Conference', {
      body: { propertyId: pmc.propertyId, title: 'EV' },
      patch: { title: 'EV 2' },
    });
  });

  it('refuses every write of every conference resource to a contractor (403) and writes nothing', async () => {
    const token = world.contractor.full.token;
    for (const c of CASES) {
      const { row, build } = await createRow(c, pmc);
      const before = await allCounts();
      for (const [method, path, body] of [
        ['POST', c.path, build.body],
        ['PATCH', `${c.path}/${row.id}`, build.patch],
        ['DELETE', `${c.path}/${row.id}`],
      ] as const) {
        const problem = await expectProblem(await call(method, path, token, body), 403);
        expect(problem.detail, `${method} ${path}`).not.toMatch(/conference feature/);
      }
      expect(await allCounts()).toEqual(before);
      expect(await requestOk(api, 'GET', `${c.path}/${row.id}`, pmc.token)).toEqual(row);
    }
  });
});

describe('scope', () => {
  it('hides every conference resource of another party (404) and leaves it unchanged', async () => {
    const token = pmc.token;
    for (const c of CASES) {
      const { row, build } = await createRow(c, otherPmc);
      const path = `${c.path}/${row.id}`;
      await expectOutOfScope(api, c.path, token, row.id, { patch: build.patch });
      const search = await postOk<{ totalCount: number }>(api, `${c.path}/search`, token, {
        filters: [{ attribute: 'id', operator: 'eq', value: row.id }],
      });
      expect(search.totalCount, c.name).toBe(0);
      const list = await requestOk<{ items: Entity[] }>(api, 'GET', `${c.path}?PageSize=100`, token);
      expect(list.items.map((item) => item.partyId).filter((id) => id === otherPmc.partyId)).toEqual([]);
      expect(await requestOk(api, 'GET', path, otherPmc.token)).toEqual(row);
      expect(await requestOk(api, 'GET', path, world.admin.full.token)).toEqual(row);
    }
  });

  it('refuses references to rows the caller cannot see, or deleted ones (400 naming the field)', async () => {
    const mine = await agendaWithSession(pmc);
    const foreign = await agendaWithSession(otherPmc);
    const foreignTemplate = await postOk(api, '/api/resolution-templates', otherPmc.token, {
      title: 'Vorlage',
    });
    const goneTopic = await postOk(api, '/api/topics', pmc.token, {
      conferenceId: mine.conference.id,
      title: 'Weg',
    });
    expect((await call('DELETE', `/api/topics/${goneTopic.id}`, pmc.token)).status).toBe(204);
    const before = await allCounts();
    for (const [path, body, field] of [
      ['/api/conferences', { propertyId: otherPmc.propertyId, title: 'EV' }, 'propertyId'],
      ['/api/conference-settings', { partyId: otherPmc.partyId }, 'partyId'],
      ['/api/topics', { conferenceId: foreign.conference.id, title: 'TOP' }, 'conferenceId'],
      ['/api/topic-notes', { topicId: foreign.topic.id, text: 'x' }, 'topicId'],
      ['/api/topic-notes', { topicId: goneTopic.id, text: 'x' }, 'topicId'],
      ['/api/resolutions', { topicId: foreign.topic.id, title: 'x' }, 'topicId'],
      ['/api/resolution-options', { resolutionId: foreign.resolution.id, label: 'x' }, 'resolutionId'],
      [
        '/api/voting-sessions',
        { conferenceId: mine.conference.id, resolutionId: foreign.resolution.id },
        'resolutionId',
      ],
      [
        '/api/mandates',
        { conferenceId: mine.conference.id, grantorPartyId: world.otherUser.id, proxyPartyId: pmc.partyId },
        'grantorPartyId',
      ],
      [
        '/api/mandates',
        { conferenceId: mine.conference.id, grantorPartyId: pmc.ownerId, proxyPartyId: otherPmc.partyId },
        'proxyPartyId',
      ],
      [
        '/api/conference-votes',
        { votingSessionId: foreign.session.id, resolutionOptionId: mine.yes.id, voterPartyId: pmc.ownerId },
        'votingSessionId',
      ],
      [
        '/api/conference-votes',
        {
          votingSessionId: mine.session.id,
          resolutionOptionId: mine.yes.id,
          voterPartyId: world.otherUser.id,
        },
        'voterPartyId',
      ],
      [
        '/api/predefined-votes',
        { resolutionId: mine.resolution.id, resolutionOptionId: foreign.yes.id, voterPartyId: pmc.ownerId },
        'resolutionOptionId',
      ],
      [
        '/api/resolution-option-templates',
        { resolutionTemplateId: foreignTemplate.id, label: 'x' },
        'resolutionTemplateId',
      ],
    ] as const) {
      const problem = await expectProblem(await call('POST', path, pmc.token, body), 400);
      expect(problem.errors, `${path} ${JSON.stringify(body)}`).toEqual({ [field]: [expect.any(String)] });
    }
    expect(await allCounts()).toEqual(before);
  });

  it('gives a child the party of its parent, whoever writes it', async () => {
    const conference = await postOk(api, '/api/conferences', pmc.token, {
      propertyId: pmc.propertyId,
      title: 'EV',
    });
    const topic = await postOk(api, '/api/topics', world.admin.full.token, {
      conferenceId: conference.id,
      title: 'TOP',
    });
    expect(topic.partyId).toBe(pmc.partyId);
    expect(await requestOk(api, 'GET', `/api/topics/${topic.id}`, pmc.token)).toEqual(topic);
    // and a manager writing into the conference of a party it manages keeps that party
    const owned = await postOk(api, '/api/conferences', pmc.token, {
      partyId: pmc.ownerId,
      propertyId: pmc.propertyId,
      title: 'EV',
    });
    const ownedTopic = await postOk(api, '/api/topics', pmc.token, { conferenceId: owned.id, title: 'TOP' });
    expect([owned.partyId, ownedTopic.partyId]).toEqual([pmc.ownerId, pmc.ownerId]);
  });
});

describe('validation', () => {
  it('refuses bad input with a 400 naming the field and writes nothing', async () => {
    const tree = await agendaWithSession(pmc);
    const second = await agenda(pmc);
    const template = await postOk(api, '/api/resolution-templates', pmc.token, { title: 'Vorlage' });
    const closed = await postOk(api, '/api/voting-sessions', pmc.token, {
      conferenceId: second.conference.id,
      resolutionId: second.resolution.id,
      status: 'closed',
      openedAt: '2026-03-05T17:00:00.000Z',
      closedAt: '2026-03-05T18:00:00.000Z',
    });
    const conference = { propertyId: pmc.propertyId, title: 'EV' };
    const vote = {
      votingSessionId: tree.session.id,
      resolutionOptionId: tree.yes.id,
      voterPartyId: pmc.ownerId,
    };
    const before = await allCounts();
    for (const [method, path, body, field] of [
      ['POST', '/api/conferences', { title: 'EV' }, 'propertyId'],
      ['POST', '/api/conferences', { ...conference, title: '  ' }, 'title'],
      ['POST', '/api/conferences', { ...conference, status: 'done' }, 'status'],
      ['POST', '/api/conferences', { ...conference, scheduledAt: 'tomorrow' }, 'scheduledAt'],
      ['POST', '/api/conferences', { ...conference, location: 'x'.repeat(201) }, 'location'],
      ['PATCH', `/api/conferences/${tree.conference.id}`, { status: 'over' }, 'status'],
      ['PATCH', `/api/conferences/${tree.conference.id}`, { partyId: otherPmc.partyId }, 'partyId'],
      ['POST', '/api/conference-settings', { quorumPercent: 101 }, 'quorumPercent'],
      ['POST', '/api/conference-settings', { votingMethod: 'shares' }, 'votingMethod'],
      ['POST', '/api/conference-settings', { allowProxyVoting: 'yes' }, 'allowProxyVoting'],
      ['POST', '/api/conference-settings', { defaultDurationMinutes: 0 }, 'defaultDurationMinutes'],
      ['POST', '/api/conference-settings', { invitationLeadDays: 1.5 }, 'invitationLeadDays'],
      ['POST', '/api/topics', { conferenceId: tree.conference.id, title: 'TOP', position: 0 }, 'position'],
      [
        'POST',
        '/api/topics',
        { conferenceId: tree.conference.id, title: 'TOP', partyId: pmc.partyId },
        'partyId',
      ],
      ['PATCH', `/api/topics/${tree.topic.id}`, { conferenceId: second.conference.id }, 'conferenceId'],
      ['POST', '/api/topic-notes', { topicId: tree.topic.id, text: '' }, 'text'],
      ['POST', '/api/resolutions', { topicId: tree.topic.id, title: 'x', majority: 'most' }, 'majority'],
      ['POST', '/api/resolution-options', { resolutionId: tree.resolution.id }, 'label'],
      [
        'POST',
        '/api/voting-sessions',
        { conferenceId: tree.conference.id, resolutionId: second.resolution.id },
        'resolutionId',
      ],
      [
        'POST',
        '/api/voting-sessions',
        {
          conferenceId: second.conference.id,
          resolutionId: second.resolution.id,
          status: 'closed',
          openedAt: '2026-03-05T18:00:00Z',
          closedAt: '2026-03-05T17:00:00Z',
        },
        'closedAt',
      ],
      ['PATCH', `/api/voting-sessions/${closed.id}`, { closedAt: '2026-03-05T16:00:00Z' }, 'closedAt'],
      ['PATCH', `/api/voting-sessions/${closed.id}`, { closedAt: null }, 'closedAt'],
      ['PATCH', `/api/voting-sessions/${tree.session.id}`, { closedAt: '2030-01-01T00:00:00Z' }, 'closedAt'],
      [
        'POST',
        '/api/mandates',
        { conferenceId: tree.conference.id, grantorPartyId: pmc.partyId, proxyPartyId: pmc.ownerId },
        'grantorPartyId',
      ],
      [
        'POST',
        '/api/mandates',
        { conferenceId: tree.conference.id, grantorPartyId: pmc.ownerId, proxyPartyId: pmc.ownerId },
        'proxyPartyId',
      ],
      ['POST', '/api/conference-votes', { ...vote, weight: 0 }, 'weight'],
      ['POST', '/api/conference-votes', { ...vote, weight: 1.23456 }, 'weight'],
      ['POST', '/api/conference-votes', { ...vote, resolutionOptionId: second.yes.id }, 'resolutionOptionId'],
      [
        'POST',
        '/api/predefined-votes',
        { resolutionId: tree.resolution.id, resolutionOptionId: second.no.id, voterPartyId: pmc.ownerId },
        'resolutionOptionId',
      ],
      ['POST', '/api/topic-templates', { title: 'x'.repeat(201) }, 'title'],
      ['POST', '/api/resolution-templates', { title: 'x', unknown: 1 }, 'unknown'],
      [
        'POST',
        '/api/resolution-option-templates',
        { resolutionTemplateId: template.id, label: 'Ja', position: 'first' },
        'position',
      ],
    ] as const) {
      const problem = await expectProblem(await call(method, path, pmc.token, body), 400);
      expect(problem.errors, `${method} ${path} ${JSON.stringify(body)}`).toHaveProperty([field]);
    }
    expect(await allCounts()).toEqual(before);
  });
});

describe('rules of the conference family', () => {
  it('lets a registration subscribe to ConferenceRole, whose changes then make webhooks; one holder per office', async () => {
    const registration = await postOk(api, '/api/webhook-registrations', pmc.token, {
      targetUrl: 'http://127.0.0.1:9/roles',
      targetAuthorization: { type: 0 },
      enabledEvents: [{ entityName: 'conferencerole', type: 1 }],
    });
    expect(registration.enabledEvents).toEqual([
      expect.objectContaining({ entityName: 'ConferenceRole', type: 1 }),
    ]);
    const conference = (await agenda(pmc)).conference;
    const role = await postOk(api, '/api/conference-roles', pmc.token, {
      conferenceId: conference.id,
      holderPartyId: pmc.ownerId,
      role: 'scrutineer',
    });
    const webhooks = await api.db
      .knex('webhooks')
      .join('entity_changes', 'entity_changes.id', 'webhooks.entity_change_id')
      .where('webhooks.registration_id', registration.id)
      .select('entity_changes.entity_name', 'entity_changes.entity_id', 'entity_changes.type');
    expect(webhooks).toEqual([{ entity_name: 'ConferenceRole', entity_id: role.id, type: 1 }]);
    await expectProblem(
      await call('POST', '/api/conference-roles', pmc.token, {
        conferenceId: conference.id,
        holderPartyId: pmc.partyId,
        role: 'scrutineer',
      }),
      409,
      { detail: `Conference ${conference.id} already has a scrutineer` },
    );
  });

  it('keeps one live settings record per party (409) and captures nothing for the refused one', async () => {
    await subscribe(api, pmc.partyId, 'Settings');
    const settings = await postOk(api, '/api/conference-settings', pmc.token, {});
    expect(settings).toMatchObject({ partyId: pmc.partyId, quorumPercent: 50, votingMethod: 'head' });
    const before = await allCounts();
    await expectProblem(
      await call('POST', '/api/conference-settings', pmc.token, { quorumPercent: 10 }),
      409,
      {
        detail: `Party ${pmc.partyId} already has conference settings; change them instead`,
      },
    );
    await expectProblem(
      await call('POST', '/api/conference-settings', world.admin.full.token, { partyId: pmc.partyId }),
      409,
    );
    expect(await allCounts()).toEqual(before);
    expect((await call('DELETE', `/api/conference-settings/${settings.id}`, pmc.token)).status).toBe(204);
    const again = await postOk(api, '/api/conference-settings', pmc.token, {});
    expect((await call('DELETE', `/api/conference-settings/${again.id}`, pmc.token)).status).toBe(204);
  });

  it('refuses new mandates while the party’s settings turn proxy voting off, and a second one per owner', async () => {
    const tree = await agenda(pmc);
    const mandate = {
      conferenceId: tree.conference.id,
      grantorPartyId: pmc.ownerId,
      proxyPartyId: pmc.partyId,
    };
    const settings = await postOk(api, '/api/conference-settings', pmc.token, { allowProxyVoting: false });
    await expectProblem(await call('POST', '/api/mandates', pmc.token, mandate), 409, {
      detail: `Proxy voting is turned off in the conference settings of party ${pmc.partyId}`,
    });
    await requestOk(api, 'PATCH', `/api/conference-settings/${settings.id}`, pmc.token, {
      allowProxyVoting: true,
    });
    await postOk(api, '/api/mandates', pmc.token, mandate);
    await expectProblem(await call('POST', '/api/mandates', pmc.token, mandate), 409);
    expect((await call('DELETE', `/api/conference-settings/${settings.id}`, pmc.token)).status).toBe(204);
  });

  it('takes votes only while the session is open, one per voter; closing stamps closedAt, reopening clears it', async () => {
    const tree = await agendaWithSession(pmc);
    const sessionPath = `/api/voting-sessions/${tree.session.id}`;
    const vote = await postOk(api, '/api/conference-votes', pmc.token, {
      votingSessionId: tree.session.id,
      resolutionOptionId: tree.yes.id,
      voterPartyId: pmc.ownerId,
    });
    expect(vote.weight).toBe(1);
    await expectProblem(
      await call('POST', '/api/conference-votes', pmc.token, {
        votingSessionId: tree.session.id,
        resolutionOptionId: tree.no.id,
        voterPartyId: pmc.ownerId,
      }),
      409,
    );
    // a second open session of the same resolution
    await expectProblem(
      await call('POST', '/api/voting-sessions', pmc.token, {
        conferenceId: tree.conference.id,
        resolutionId: tree.resolution.id,
      }),
      409,
    );

    api.clock.advance(60_000);
    const closed = await requestOk(api, 'PATCH', sessionPath, pmc.token, { status: 'closed' });
    expect(closed.closedAt).toBe(api.clock.now().toISOString());
    const before = await allCounts();
    const votePath = `/api/conference-votes/${vote.id}`;
    const refusal = `Voting session ${tree.session.id} is closed; its votes no longer change`;
    await expectProblem(await call('PATCH', votePath, pmc.token, { resolutionOptionId: tree.no.id }), 409, {
      detail: refusal,
    });
    await expectProblem(await call('DELETE', votePath, pmc.token), 409, { detail: refusal });
    await expectProblem(
      await call('POST', '/api/conference-votes', pmc.token, {
        votingSessionId: tree.session.id,
        resolutionOptionId: tree.yes.id,
        voterPartyId: pmc.partyId,
      }),
      409,
      { detail: refusal },
    );
    expect(await allCounts()).toEqual(before);

    const reopened = await requestOk(api, 'PATCH', sessionPath, pmc.token, { status: 'open' });
    expect(reopened).toMatchObject({ status: 'open', closedAt: null });
    expect(
      await requestOk(api, 'PATCH', votePath, pmc.token, { resolutionOptionId: tree.no.id }),
    ).toMatchObject({
      resolutionOptionId: tree.no.id,
    });
  });

  it('refuses to delete a row while live children point at it (409), then deletes leaf to root', async () => {
    const tree = await agendaWithSession(pmc);
    const note = await postOk(api, '/api/topic-notes', pmc.token, { topicId: tree.topic.id, text: 'Notiz' });
    const template = await postOk(api, '/api/resolution-templates', pmc.token, { title: 'Vorlage' });
    const optionTemplate = await postOk(api, '/api/resolution-option-templates', pmc.token, {
      resolutionTemplateId: template.id,
      label: 'Ja',
    });
    const vote = await postOk(api, '/api/conference-votes', pmc.token, {
      votingSessionId: tree.session.id,
      resolutionOptionId: tree.yes.id,
      voterPartyId: pmc.ownerId,
    });
    const paths = {
      conference: `/api/conferences/${tree.conference.id}`,
      topic: `/api/topics/${tree.topic.id}`,
      resolution: `/api/resolutions/${tree.resolution.id}`,
      yes: `/api/resolution-options/${tree.yes.id}`,
      session: `/api/voting-sessions/${tree.session.id}`,
      template: `/api/resolution-templates/${template.id}`,
    };
    const before = await allCounts();
    for (const path of Object.values(paths)) {
      await expectProblem(await call('DELETE', path, pmc.token), 409, {
        detail: /still has .*; delete them first$/,
      });
    }
    expect(await allCounts()).toEqual(before);
    for (const path of [
      `/api/conference-votes/${vote.id}`,
      paths.session,
      paths.yes,
      `/api/resolution-options/${tree.no.id}`,
      paths.resolution,
      `/api/topic-notes/${note.id}`,
      paths.topic,
      paths.conference,
      `/api/resolution-option-templates/${optionTemplate.id}`,
      paths.template,
    ]) {
      expect((await call('DELETE', path, pmc.token)).status, path).toBe(204);
    }
  });

  it('appends topics and options after the last live one unless a position is given', async () => {
    const tree = await agenda(pmc);
    expect([tree.yes.position, tree.no.position]).toEqual([1, 2]);
    const second = await postOk(api, '/api/topics', pmc.token, {
      conferenceId: tree.conference.id,
      title: 'TOP 2',
    });
    const placed = await postOk(api, '/api/topics', pmc.token, {
      conferenceId: tree.conference.id,
      title: 'TOP 9',
      position: 9,
    });
    const after = await postOk(api, '/api/topics', pmc.token, {
      conferenceId: tree.conference.id,
      title: 'TOP 10',
    });
    expect([tree.topic.position, second.position, placed.position, after.position]).toEqual([1, 2, 9, 10]);
  });
});
