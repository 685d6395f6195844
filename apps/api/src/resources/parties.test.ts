import { WebhookState, type ContactDetailsRead, type PartyRead } from '@platform/shared';
import { beforeEach, describe, expect, it } from 'vitest';
import { expectProblem, writableCounts, expectFieldErrors } from '../../tests/support/http';
import { buildAccount, useTestApi } from '../../tests/support/api';
import {
  capturedChanges,
  countRows,
  expectOutOfScope,
  expectRegistryAccessRules,
  expectRolledBack,
  postOk,
  resetCapture,
  subscribe,
  webhookRows,
  expectDeleted,
} from '../../tests/support/resources';

const { api, world } = useTestApi({ world: true });

const createParty = (token: string, body: Record<string, unknown>) =>
  postOk<PartyRead>(api, '/api/parties', token, body);

const detail = (overrides: Record<string, unknown> = {}) => ({
  type: 'email',
  value: 'office@example.com',
  ...overrides,
});

const createDetail = (token: string, body: Record<string, unknown> = detail()) =>
  postOk<ContactDetailsRead>(api, '/api/contact-details', token, body);

const patch = (path: string, token: string, json: unknown) =>
  api.fetch(path, { method: 'PATCH', token, json });
const remove = (path: string, token: string) => api.fetch(path, { method: 'DELETE', token });

const changes = () => capturedChanges(api);
const webhooks = () => webhookRows(api);
const count = (table: string) => countRows(api, table);

beforeEach(async () => {
  await resetCapture(api, 'contact_details');
  await api.db.knex('parties').update({ conference_enabled: false });
});

describe('Party through the resource registry', () => {
  it('lets a Property Management Company create, read, list, search, update and delete the parties it manages', async () => {
    const token = world.pmc.full.token;
    const created = await createParty(token, { type: 5, name: 'Bauer Sanitär' });
    expect(created).toEqual({
      id: expect.any(Number),
      type: 5,
      name: 'Bauer Sanitär',
      managedByPartyId: world.pmc.id,
      conferenceEnabled: false,
      created: expect.any(String),
      lastModified: null,
      deleted: null,
    });

    expect(await (await api.fetch(`/api/parties/${created.id}`, { token })).json()).toEqual(created);

    const list = (await (await api.fetch('/api/parties?SortByAttributeName=name', { token })).json()) as {
      items: PartyRead[];
    };
    expect(list.items).toContainEqual(created);
    // sorted by name; the managing party itself is in its own scope
    const names = list.items.map((p) => p.name);
    expect(names).toEqual([...names].sort((a, b) => (a < b ? -1 : a > b ? 1 : 0)));
    expect(list.items.map((p) => p.id)).toContain(world.pmc.id);

    const search = await api.fetch('/api/parties/search', {
      method: 'POST',
      token,
      json: {
        filters: [
          { attribute: 'name', operator: 'contains', value: 'sanitär' },
          { attribute: 'managedByPartyId', operator: 'eq', value: world.pmc.id },
        ],
      },
    });
    expect(((await search.json()) as { items: PartyRead[] }).items).toEqual([created]);

    const batch = await api.fetch('/api/parties/batch', {
      method: 'POST',
      token,
      json: { ids: [created.id, world.pmc.id] },
    });
    expect(((await batch.json()) as PartyRead[]).map((p) => p.id)).toEqual([created.id, world.pmc.id]);

    const patched = await patch(`/api/parties/${created.id}`, token, { name: 'Bauer Sanitär GmbH' });
    expect(patched.status).toBe(200);
    expect(await patched.json()).toMatchObject({
      name: 'Bauer Sanitär GmbH',
      type: 5,
      lastModified: expect.any(String),
    });

    await expectDeleted(api, `/api/parties/${created.id}`, token);
    const row = await api.db.knex('parties').where({ id: created.id }).first();
    expect(row.deleted).not.toBeNull();
  });

  it('lets an Admin create any party, place it under a Property Management Company, move it and grant the conference feature', async () => {
    const token = world.admin.full.token;
    const company = await createParty(token, { type: 2, name: 'Neue Hausverwaltung' });
    expect(company).toMatchObject({ type: 2, managedByPartyId: null });
    const owner = await createParty(token, { type: 7, name: 'Eva Eigentümer', managedByPartyId: company.id });
    expect(owner.managedByPartyId).toBe(company.id);
    const moved = await patch(`/api/parties/${owner.id}`, token, {
      managedByPartyId: world.pmc.id,
      conferenceEnabled: true,
    });
    expect(await moved.json()).toMatchObject({ managedByPartyId: world.pmc.id, conferenceEnabled: true });
    // now in the PMC's scope, and out of the previous manager's
    expect((await api.fetch(`/api/parties/${owner.id}`, { token: world.pmc.full.token })).status).toBe(200);
    const released = await patch(`/api/parties/${owner.id}`, token, { managedByPartyId: null });
    expect(await released.json()).toMatchObject({ managedByPartyId: null });
    expect((await api.fetch(`/api/parties/${owner.id}`, { token: world.pmc.full.token })).status).toBe(404);
  });

  it('applies the access rules of every operation', async () => {
    await expectRegistryAccessRules(api, world, '/api/parties', 'Party', {
      body: { type: 7, name: 'Access' },
      patch: { name: 'Renamed' },
      inScope: () => ({ type: 7, name: 'Scoped', managedByPartyId: world.pmc.id }),
    });
  });

  it('scopes parties: Admin all, others their own party and the ones they manage (out of scope = 404)', async () => {
    const ids = async (token: string) =>
      (
        (await (await api.fetch('/api/parties?PageSize=100', { token })).json()) as { items: PartyRead[] }
      ).items.map((p) => p.id);
    const pmcSees = await ids(world.pmc.full.token);
    expect(pmcSees).toEqual(
      expect.arrayContaining([world.pmc.id, world.contractor.id, world.user.id, world.broker.id]),
    );
    for (const foreign of [world.admin.id, world.otherPmc.id, world.otherUser.id, world.insurer.id]) {
      expect(pmcSees).not.toContain(foreign);
    }
    expect(await ids(world.user.full.token)).toEqual([world.user.id]);
    expect(await ids(world.admin.full.token)).toEqual(
      expect.arrayContaining([world.admin.id, world.otherPmc.id, world.otherUser.id, world.insurer.id]),
    );

    const token = world.pmc.full.token;
    const foreign = await createParty(world.otherPmc.full.token, { type: 7, name: 'Fremd' });
    await expectOutOfScope(api, '/api/parties', token, foreign.id, {
      patch: { name: 'X' },
      visible: [world.user.id],
    });
    expect((await api.db.knex('parties').where({ id: foreign.id }).first()).name).toBe('Fremd');
  });

  it('keeps a Property Management Company to parties it manages, and Admin-only fields to Admins, writing nothing when refused', async () => {
    const token = world.pmc.full.token;
    const managed = await createParty(token, { type: 7, name: 'Managed' });
    const before = await writableCounts(api);
    const snapshot = async () => api.db.knex('parties').orderBy('id').select('*');
    const parties = await snapshot();

    for (const body of [
      { type: 1, name: 'Sneaky Admin' },
      { type: 2, name: 'Sneaky PMC' },
      { type: 7, name: 'Elsewhere', managedByPartyId: world.otherPmc.id },
      { type: 7, name: 'Feature', conferenceEnabled: true },
    ]) {
      await expectProblem(await api.fetch('/api/parties', { method: 'POST', token, json: body }), 403);
    }
    await expectProblem(await patch(`/api/parties/${managed.id}`, token, { managedByPartyId: null }), 403);
    await expectProblem(await patch(`/api/parties/${managed.id}`, token, { conferenceEnabled: true }), 403);
    await expectProblem(await patch(`/api/parties/${world.pmc.id}`, token, { conferenceEnabled: true }), 403);
    // the type is fixed at creation
    const typed = await expectProblem(await patch(`/api/parties/${managed.id}`, token, { type: 2 }), 400);
    expect(typed.errors).toHaveProperty('type');

    expect(await writableCounts(api)).toEqual(before);
    expect(await snapshot()).toEqual(parties);
    expect(await count('entity_changes')).toBe(1);
  });

  it('lets a Property Management Company holding the conference feature pass it on to the parties it manages, not to itself', async () => {
    const token = world.pmc.full.token;
    await api.db.knex('parties').where({ id: world.pmc.id }).update({ conference_enabled: true });
    const created = await createParty(token, {
      type: 7,
      name: 'Owner with conferences',
      conferenceEnabled: true,
    });
    expect(created.conferenceEnabled).toBe(true);
    const off = await patch(`/api/parties/${world.user.id}`, token, { conferenceEnabled: true });
    expect(await off.json()).toMatchObject({ conferenceEnabled: true });
    await expectProblem(
      await patch(`/api/parties/${world.pmc.id}`, token, { conferenceEnabled: false }),
      403,
    );
  });

  it('refuses bad input with a 400 naming the field and writes nothing', async () => {
    const before = await writableCounts(api);
    const admin = world.admin.full.token;
    await expectFieldErrors(api, 'POST', '/api/parties', admin, [
      [{ type: 7, name: '' }, 'name'],
      [{ type: 7, name: 'x'.repeat(201) }, 'name'],
      [{ type: 4, name: 'No such type' }, 'type'],
      [{ name: 'No type' }, 'type'],
      [{ type: 7, name: 'Extra', unknown: 1 }, 'unknown'],
      [{ type: 7, name: 'Bad manager', managedByPartyId: 'one' }, 'managedByPartyId'],
      [{ type: 7, name: 'Unknown manager', managedByPartyId: 999999 }, 'managedByPartyId'],
      // only a Property Management Company manages parties, and Admin and PMC parties are never managed
      [{ type: 7, name: 'Managed by a user', managedByPartyId: world.user.id }, 'managedByPartyId'],
      [{ type: 2, name: 'Managed PMC', managedByPartyId: world.pmc.id }, 'managedByPartyId'],
    ]);
    const moved = await expectProblem(
      await patch(`/api/parties/${world.otherPmc.id}`, admin, { managedByPartyId: world.pmc.id }),
      400,
    );
    expect(moved.errors).toHaveProperty('managedByPartyId');
    expect(await writableCounts(api)).toEqual(before);
    expect(await count('entity_changes')).toBe(0);
  });

  it('refuses to delete one’s own party or a party with live accounts or managed parties (409), writing nothing', async () => {
    await subscribe(api, world.pmc.id, 'Party');
    await subscribe(api, world.admin.id, 'Party');
    const admin = world.admin.full.token;
    await expectProblem(await remove(`/api/parties/${world.admin.id}`, admin), 409, { detail: /itself/ });
    await expectProblem(await remove(`/api/parties/${world.pmc.id}`, world.pmc.full.token), 409, {
      detail: /itself/,
    });
    await expectProblem(await remove(`/api/parties/${world.contractor.id}`, world.pmc.full.token), 409, {
      detail: /live account/,
    });
    const company = await createParty(admin, { type: 2, name: 'Leere Verwaltung' });
    const managed = await createParty(admin, { type: 7, name: 'Mieter', managedByPartyId: company.id });
    await expectProblem(await remove(`/api/parties/${company.id}`, admin), 409, { detail: /manages 1 live/ });
    expect(
      await api.db.knex('parties').whereIn('id', [company.id, world.contractor.id]).whereNotNull('deleted'),
    ).toEqual([]);
    // only the two creates were captured
    expect((await changes()).summary.map((c) => c[1])).toEqual([1, 1]);

    // once the managed party is gone, the company can go
    expect((await remove(`/api/parties/${managed.id}`, admin)).status).toBe(204);
    expect((await remove(`/api/parties/${company.id}`, admin)).status).toBe(204);
    // a deleted account no longer holds its party
    const lone = await createParty(admin, { type: 5, name: 'Einzel' });
    const account = await buildAccount(api.deps, { partyId: lone.id });
    await expectProblem(await remove(`/api/parties/${lone.id}`, admin), 409);
    await api.db.knex('accounts').where({ id: account.id }).update({ deleted: new Date() });
    expect((await remove(`/api/parties/${lone.id}`, admin)).status).toBe(204);
  });

  it('captures every write with its read shape and fans out to the writer’s subscribed registrations only', async () => {
    const registration = await subscribe(api, world.pmc.id, 'Party');
    const updatesOnly = await subscribe(api, world.pmc.id, 'Party', [2]);
    const otherEntity = await subscribe(api, world.pmc.id, 'Property');
    const foreign = await subscribe(api, world.otherPmc.id, 'Party');
    const token = world.pmc.full.token;
    const created = await createParty(token, { type: 13, name: 'Makler' });
    await patch(`/api/parties/${created.id}`, token, { name: 'Makler AG' });
    await remove(`/api/parties/${created.id}`, token);

    const { rows, summary } = await changes();
    expect(summary).toEqual([
      ['Party', 1, created.id, world.pmc.id, world.pmc.full.id],
      ['Party', 2, created.id, world.pmc.id, world.pmc.full.id],
      ['Party', 3, created.id, world.pmc.id, world.pmc.full.id],
    ]);
    expect(rows[0].entity).toEqual(created);
    expect(rows[1].entity).toEqual({ ...created, name: 'Makler AG', lastModified: expect.any(String) });
    expect(rows[2].entity).toMatchObject({ name: 'Makler AG', deleted: expect.any(String) });

    expect(await webhooks()).toEqual([
      { registration_id: registration, state: WebhookState.Created, entity_change_id: rows[0].id },
      { registration_id: registration, state: WebhookState.Created, entity_change_id: rows[1].id },
      { registration_id: updatesOnly, state: WebhookState.Created, entity_change_id: rows[1].id },
      { registration_id: registration, state: WebhookState.Created, entity_change_id: rows[2].id },
    ]);
    const registrations = (await webhooks()).map((w) => w.registration_id);
    expect(registrations).not.toContain(foreign);
    expect(registrations).not.toContain(otherEntity);
  });

  it('chains the changes of one party for a grouped registration', async () => {
    const grouped = await subscribe(api, world.pmc.id, 'Party', [1, 2, 3], true);
    const token = world.pmc.full.token;
    const created = await createParty(token, { type: 3, name: 'Pool' });
    await patch(`/api/parties/${created.id}`, token, { name: 'Pool 2' });
    const rows = await api.db.knex('webhooks').where({ registration_id: grouped }).orderBy('id');
    expect(rows.map((w) => [w.state, w.group_key, w.group_seq])).toEqual([
      [WebhookState.Created, `Party:${created.id}`, 1],
      [WebhookState.Pending, `Party:${created.id}`, 2],
    ]);
  });

  it('rolls back a write that fails at commit, with the contact-detail deletions it captured', async () => {
    await subscribe(api, world.pmc.id, 'ContactDetails');
    const token = world.pmc.full.token;
    const party = await createParty(token, { type: 5, name: 'Dach & Fach' });
    const phone = await createDetail(token, detail({ partyId: party.id, type: 'phone', value: '030 555' }));
    const details = await api.db.knex('contact_details').orderBy('id').select('*');
    await expectRolledBack(api, {
      partyId: world.pmc.id,
      entityName: 'Party',
      table: 'parties',
      writes: [
        () => api.fetch('/api/parties', { method: 'POST', token, json: { type: 7, name: 'Gone' } }),
        () => patch(`/api/parties/${party.id}`, token, { name: 'Gone' }),
        // the delete captures the deletion of the party's contact details before it fails
        () => remove(`/api/parties/${party.id}`, token),
      ],
    });
    expect(await api.db.knex('contact_details').orderBy('id').select('*')).toEqual(details);
    expect(await (await api.fetch(`/api/contact-details/${phone.id}`, { token })).json()).toEqual(phone);
  });
});

describe('ContactDetails through the resource registry', () => {
  it('creates, reads, lists, searches, updates and deletes the contact details of a party', async () => {
    const token = world.pmc.full.token;
    const created = await createDetail(token, detail({ label: 'Zentrale', isPrimary: true }));
    expect(created).toEqual({
      id: expect.any(Number),
      partyId: world.pmc.id,
      type: 'email',
      value: 'office@example.com',
      label: 'Zentrale',
      isPrimary: true,
      created: expect.any(String),
      lastModified: null,
      deleted: null,
    });
    const managed = await createDetail(
      token,
      detail({ partyId: world.contractor.id, type: 'address', value: 'Hauptstraße 1\n10827 Berlin' }),
    );
    expect(managed).toMatchObject({ partyId: world.contractor.id, isPrimary: false, label: null });

    expect(await (await api.fetch(`/api/contact-details/${created.id}`, { token })).json()).toEqual(created);
    const list = (await (
      await api.fetch('/api/contact-details?SortByAttributeName=type&AscendingOrder=false', { token })
    ).json()) as { items: ContactDetailsRead[]; totalCount: number };
    expect(list.items).toEqual([created, managed]);

    const search = await api.fetch('/api/contact-details/search', {
      method: 'POST',
      token,
      json: { filters: [{ attribute: 'partyId', operator: 'eq', value: world.contractor.id }] },
    });
    expect(((await search.json()) as { items: ContactDetailsRead[] }).items).toEqual([managed]);

    const patched = await patch(`/api/contact-details/${created.id}`, token, {
      type: 'website',
      value: 'https://hausverwaltung.example',
      label: null,
    });
    expect(await patched.json()).toMatchObject({
      type: 'website',
      value: 'https://hausverwaltung.example',
      label: null,
      isPrimary: true,
    });

    await expectDeleted(api, `/api/contact-details/${created.id}`, token);
  });

  it('applies the access rules of every operation', async () => {
    await expectRegistryAccessRules(api, world, '/api/contact-details', 'ContactDetails', {
      body: detail(),
      patch: { label: 'Büro' },
    });
  });

  it('scopes contact details to the caller’s parties (out of scope = 404)', async () => {
    const foreign = await createDetail(world.otherPmc.full.token);
    const ofUser = await createDetail(world.pmc.full.token, detail({ partyId: world.user.id }));
    const token = world.pmc.full.token;
    await expectOutOfScope(api, '/api/contact-details', token, foreign.id, {
      patch: { label: 'X' },
      visible: [ofUser.id],
    });
    // a User reads its own party's details, nobody else's
    const mine = (await (
      await api.fetch('/api/contact-details', { token: world.user.full.token })
    ).json()) as {
      items: ContactDetailsRead[];
    };
    expect(mine.items).toEqual([ofUser]);
    const problem = await expectProblem(
      await api.fetch('/api/contact-details', {
        method: 'POST',
        token,
        json: detail({ partyId: world.otherPmc.id }),
      }),
      400,
    );
    expect(problem.errors).toHaveProperty('partyId');
  });

  it('refuses bad input with a 400 naming the field and writes nothing', async () => {
    const token = world.pmc.full.token;
    const existing = await createDetail(token);
    const before = await writableCounts(api);
    const details = async () => api.db.knex('contact_details').orderBy('id').select('*');
    const stored = await details();
    await expectFieldErrors(api, 'POST', '/api/contact-details', token, [
      [detail({ value: 'not an email' }), 'value'],
      [detail({ type: 'phone', value: '030 CALL ME' }), 'value'],
      [detail({ type: 'mobile', value: '12' }), 'value'],
      [detail({ type: 'website', value: 'ftp://files.example' }), 'value'],
      [detail({ type: 'address', value: 'x'.repeat(501) }), 'value'],
      [detail({ value: '   ' }), 'value'],
      [detail({ type: 'pager' }), 'type'],
      [detail({ label: 'x'.repeat(101) }), 'label'],
      [detail({ isPrimary: 'yes' }), 'isPrimary'],
      [detail({ unknown: true }), 'unknown'],
      [{ type: 'email' }, 'value'],
    ]);
    const path = `/api/contact-details/${existing.id}`;
    // a new type must suit the stored value, and a new value the stored type
    expect((await expectProblem(await patch(path, token, { type: 'phone' }), 400)).errors).toHaveProperty(
      'type',
    );
    expect((await expectProblem(await patch(path, token, { value: 'nope' }), 400)).errors).toHaveProperty(
      'value',
    );
    expect(
      (await expectProblem(await patch(path, token, { partyId: world.user.id }), 400)).errors,
    ).toHaveProperty('partyId');
    expect(await details()).toEqual(stored);
    expect(await writableCounts(api)).toEqual(before);
    expect(await count('entity_changes')).toBe(1);
  });

  it('holds at most 100 live details per party', async () => {
    await api.db.knex('contact_details').insert(
      Array.from({ length: 100 }, (_, i) => ({
        party_id: world.broker.id,
        type: 'phone',
        value: `030 ${1000 + i}`,
      })),
    );
    const problem = await expectProblem(
      await api.fetch('/api/contact-details', {
        method: 'POST',
        token: world.pmc.full.token,
        json: detail({ partyId: world.broker.id }),
      }),
      400,
    );
    expect(problem.errors).toHaveProperty('partyId');
    await api.db
      .knex('contact_details')
      .where({ party_id: world.broker.id })
      .limit(1)
      .update({ deleted: new Date() });
    await createDetail(world.pmc.full.token, detail({ partyId: world.broker.id }));
  });

  it('keeps one primary detail per party and type, capturing the demotion of the previous one', async () => {
    const registration = await subscribe(api, world.pmc.id, 'ContactDetails');
    const token = world.pmc.full.token;
    const first = await createDetail(token, detail({ isPrimary: true }));
    const phone = await createDetail(
      token,
      detail({ type: 'phone', value: '+49 30 123456', isPrimary: true }),
    );
    const second = await createDetail(token, detail({ value: 'info@example.com', isPrimary: true }));
    const primaries = await api.db
      .knex('contact_details')
      .where({ is_primary: true })
      .orderBy('id')
      .pluck('id');
    expect(primaries).toEqual([phone.id, second.id]);

    const { rows, summary } = await changes();
    expect(summary).toEqual([
      ['ContactDetails', 1, first.id, world.pmc.id, world.pmc.full.id],
      ['ContactDetails', 1, phone.id, world.pmc.id, world.pmc.full.id],
      ['ContactDetails', 2, first.id, world.pmc.id, world.pmc.full.id],
      ['ContactDetails', 1, second.id, world.pmc.id, world.pmc.full.id],
    ]);
    expect(rows[2].entity).toEqual({ ...first, isPrimary: false, lastModified: expect.any(String) });
    expect((await webhooks()).map((w) => [w.registration_id, w.entity_change_id])).toEqual(
      rows.map((c) => [registration, c.id]),
    );

    // making the first primary again through a patch demotes the second
    await patch(`/api/contact-details/${first.id}`, token, { isPrimary: true });
    expect(
      await api.db.knex('contact_details').where({ type: 'email', is_primary: true }).pluck('id'),
    ).toEqual([first.id]);
    expect((await changes()).summary.slice(4).map((c) => [c[1], c[2]])).toEqual([
      [2, second.id],
      [2, first.id],
    ]);
  });

  it('captures every write and fans out to the writer’s subscribed registrations only', async () => {
    const registration = await subscribe(api, world.pmc.id, 'ContactDetails');
    const deletesOnly = await subscribe(api, world.pmc.id, 'ContactDetails', [3]);
    const otherEntity = await subscribe(api, world.pmc.id, 'Party');
    const foreign = await subscribe(api, world.otherPmc.id, 'ContactDetails');
    const token = world.pmc.full.token;
    const created = await createDetail(token, detail({ partyId: world.user.id }));
    await patch(`/api/contact-details/${created.id}`, token, { label: 'Privat' });
    await remove(`/api/contact-details/${created.id}`, token);
    // another party's write reaches none of the PMC's registrations
    await createDetail(world.otherPmc.full.token);

    const { rows, summary } = await changes();
    expect(summary.slice(0, 3)).toEqual([
      ['ContactDetails', 1, created.id, world.pmc.id, world.pmc.full.id],
      ['ContactDetails', 2, created.id, world.pmc.id, world.pmc.full.id],
      ['ContactDetails', 3, created.id, world.pmc.id, world.pmc.full.id],
    ]);
    expect(rows[0].entity).toEqual(created);
    expect(rows[1].entity).toMatchObject({ label: 'Privat' });
    expect(rows[2].entity.deleted).not.toBeNull();
    expect(await webhooks()).toEqual([
      { registration_id: registration, state: WebhookState.Created, entity_change_id: rows[0].id },
      { registration_id: registration, state: WebhookState.Created, entity_change_id: rows[1].id },
      { registration_id: registration, state: WebhookState.Created, entity_change_id: rows[2].id },
      { registration_id: deletesOnly, state: WebhookState.Created, entity_change_id: rows[2].id },
      { registration_id: foreign, state: WebhookState.Created, entity_change_id: rows[3].id },
    ]);
    expect((await webhooks()).map((w) => w.registration_id)).not.toContain(otherEntity);
  });

  it('rolls back a write that fails after its side effects were captured: no change, no webhook', async () => {
    await subscribe(api, world.pmc.id, 'ContactDetails');
    const token = world.pmc.full.token;
    const first = await createDetail(token, detail({ isPrimary: true }));
    // a trigger that fails the insert after the previous primary was demoted and captured
    await api.db.knex.raw(`
      create function refuse_boom() returns trigger language plpgsql as $$
      begin
        if new.value = 'boom@example.com' then raise check_violation using message = 'boom'; end if;
        return new;
      end $$;
      create trigger refuse_boom before insert on contact_details for each row execute function refuse_boom();
    `);
    try {
      await expectProblem(
        await api.fetch('/api/contact-details', {
          method: 'POST',
          token,
          json: detail({ value: 'boom@example.com', isPrimary: true }),
        }),
        400,
      );
    } finally {
      await api.db.knex.raw('drop trigger refuse_boom on contact_details; drop function refuse_boom();');
    }
    expect((await api.db.knex('contact_details').where({ id: first.id }).first()).is_primary).toBe(true);
    expect((await changes()).summary).toEqual([
      ['ContactDetails', 1, first.id, world.pmc.id, world.pmc.full.id],
    ]);
    expect(await count('webhooks')).toBe(1);
  });

  it('deletes the contact details of a deleted party, each captured as a ContactDetails deletion', async () => {
    await subscribe(api, world.pmc.id, 'ContactDetails');
    await subscribe(api, world.pmc.id, 'Party');
    const token = world.pmc.full.token;
    const party = await createParty(token, { type: 5, name: 'Dach & Fach' });
    const phone = await createDetail(token, detail({ partyId: party.id, type: 'phone', value: '030 555' }));
    const mail = await createDetail(token, detail({ partyId: party.id }));
    expect((await remove(`/api/parties/${party.id}`, token)).status).toBe(204);

    expect(await api.db.knex('contact_details').where({ party_id: party.id }).whereNull('deleted')).toEqual(
      [],
    );
    const { rows, summary } = await changes();
    expect(summary.slice(3).map((c) => [c[0], c[1], c[2]])).toEqual([
      ['ContactDetails', 3, phone.id],
      ['ContactDetails', 3, mail.id],
      ['Party', 3, party.id],
    ]);
    expect(rows[3].entity).toMatchObject({ id: phone.id, deleted: expect.any(String) });
    expect(await count('webhooks')).toBe(6);
  });
});
