import { beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { expectProblem, writableCounts } from '../../tests/support/http';
import { useTestApi } from '../../tests/support/api';
import {
  buildProperty,
  postOk,
  expectCaptureContract,
  expectNothingCaptured,
  expectOutOfScope,
  expectRolledBack,
  expectRegistryAccessRules,
  patchOk,
  resetCapture,
  expectReadListedFound,
  expectDeleted,
} from '../../tests/support/resources';

const { api, world } = useTestApi({ world: true });
let property: number;

type Notice = Record<string, unknown> & { id: number };

const notice = (overrides: Record<string, unknown> = {}) => ({
  title: 'Water off on Monday',
  body: 'Maintenance from 9 to 12.',
  ...overrides,
});
const createNotice = (token: string, body: Record<string, unknown> = notice()) =>
  postOk<Notice>(api, '/api/notices', token, body);

beforeAll(async () => {
  property = await buildProperty(api, world.pmc.id);
});
beforeEach(() => resetCapture(api));

describe('Notice', () => {
  it('creates, reads, lists, searches, updates and deletes', async () => {
    const token = world.pmc.full.token;
    const created = await createNotice(
      token,
      notice({
        propertyId: property,
        publishedAt: '2026-11-01T00:00:00Z',
        expiresAt: '2026-11-30T00:00:00+01:00',
        audience: 'tenants',
      }),
    );
    expect(created).toEqual({
      id: expect.any(Number),
      created: expect.any(String),
      lastModified: null,
      deleted: null,
      partyId: world.pmc.id,
      title: 'Water off on Monday',
      body: 'Maintenance from 9 to 12.',
      propertyId: property,
      publishedAt: '2026-11-01T00:00:00.000Z',
      expiresAt: '2026-11-29T23:00:00.000Z',
      audience: 'tenants',
    });
    await expectReadListedFound(api, '/api/notices', token, created, 'publishedAt', [
      { attribute: 'audience', operator: 'eq', value: 'tenants' },
      { attribute: 'expiresAt', operator: 'gt', value: '2026-11-15T00:00:00Z' },
    ]);

    const patched = await patchOk(api, `/api/notices/${created.id}`, token, {
      audience: 'all',
      propertyId: null,
      expiresAt: null,
    });
    expect(patched).toMatchObject({ audience: 'all', propertyId: null, expiresAt: null });

    await expectDeleted(api, `/api/notices/${created.id}`, token);
  });

  it('refuses an expiry before the publication, also when a patch moves either bound alone', async () => {
    const token = world.pmc.full.token;
    await expectProblem(
      await api.fetch('/api/notices', {
        method: 'POST',
        token,
        json: notice({ publishedAt: '2026-11-10T00:00:00Z', expiresAt: '2026-11-09T23:59:59Z' }),
      }),
      400,
      { errors: { expiresAt: ['must not be before publishedAt (2026-11-10T00:00:00.000Z)'] } },
    );
    const created = await createNotice(
      token,
      notice({ publishedAt: '2026-11-10T00:00:00Z', expiresAt: '2026-11-20T00:00:00Z' }),
    );
    const patchBounds = (json: Record<string, string>) =>
      api.fetch(`/api/notices/${created.id}`, { method: 'PATCH', token, json });
    await expectProblem(await patchBounds({ publishedAt: '2026-11-21T00:00:00Z' }), 400, {
      errors: { expiresAt: ['must not be before publishedAt (2026-11-21T00:00:00.000Z)'] },
    });
    await expectProblem(await patchBounds({ expiresAt: '2026-11-01T00:00:00Z' }), 400);
    // equal bounds are fine
    const same = await patchOk(api, `/api/notices/${created.id}`, token, {
      expiresAt: '2026-11-10T00:00:00Z',
    });
    expect(same.expiresAt).toBe('2026-11-10T00:00:00.000Z');
  });

  it('applies the access rules of every operation', async () => {
    await expectRegistryAccessRules(api, world, '/api/notices', 'Notice', {
      body: notice(),
      patch: { title: 'Updated' },
    });
  });

  it('scopes reads, writes and relations to the caller’s parties', async () => {
    const token = world.pmc.full.token;
    const foreign = await createNotice(world.otherPmc.full.token);
    const managed = await createNotice(world.admin.full.token, notice({ partyId: world.user.id }));
    expect((await api.fetch(`/api/notices/${managed.id}`, { token })).status).toBe(200);
    await expectOutOfScope(api, '/api/notices', token, foreign.id, {
      patch: { title: 'X' },
      visible: [managed.id],
    });
    const foreignProperty = await buildProperty(api, world.otherPmc.id);
    await expectProblem(
      await api.fetch('/api/notices', {
        method: 'POST',
        token,
        json: notice({ propertyId: foreignProperty }),
      }),
      400,
      { errors: { propertyId: [`Property ${foreignProperty} does not exist`] } },
    );
  });

  it('refuses bad input with a 400 naming the field and writes nothing', async () => {
    const before = await writableCounts(api);
    const token = world.pmc.full.token;
    await expectNothingCaptured(api, world, 'Notice', 'notices', async () => {
      for (const [body, field] of [
        [notice({ title: '' }), 'title'],
        [notice({ body: 'x'.repeat(20001) }), 'body'],
        [notice({ audience: 'everyone' }), 'audience'],
        [notice({ publishedAt: 'yesterday' }), 'publishedAt'],
        [notice({ publishedAt: '2026-11-10T00:00:00Z', expiresAt: '2026-11-01T00:00:00Z' }), 'expiresAt'],
        [{ title: 'No body' }, 'body'],
      ] as const) {
        const problem = await expectProblem(
          await api.fetch('/api/notices', { method: 'POST', token, json: body }),
          400,
        );
        expect(Object.keys(problem.errors ?? {}), JSON.stringify(body)).toEqual([field]);
      }
    });
    expect(await writableCounts(api)).toEqual(before);
  });

  it('captures every write with its read shape, for the writer’s subscribed registrations only', async () => {
    await expectCaptureContract(api, world, {
      entityName: 'Notice',
      path: '/api/notices',
      body: notice(),
      patch: { publishedAt: '2026-11-22T10:00:00Z' },
    });
  });

  it('rolls back a write that fails at commit: no notice change, no entity change, no webhook', async () => {
    const token = world.pmc.full.token;
    const existing = await createNotice(token);
    await expectRolledBack(api, {
      partyId: world.pmc.id,
      entityName: 'Notice',
      table: 'notices',
      writes: [
        () => api.fetch('/api/notices', { method: 'POST', token, json: notice() }),
        () => api.fetch(`/api/notices/${existing.id}`, { method: 'PATCH', token, json: { title: 'x' } }),
        () => api.fetch(`/api/notices/${existing.id}`, { method: 'DELETE', token }),
      ],
    });
  });
});
