import { PermissionAction, PERMISSIONS } from '../packages/shared/src/index';
import { beforeAll, describe, expect, it } from 'vitest';
import { DEMO_ACCOUNTS, demoEnabled, seedDemoData, seedDemoRegistrations } from './demo-seed';
import { login, useTestApi } from '../apps/api/tests/support/api';

const PASSWORD = 'Demo-Password-1!';
const TABLES = ['parties', 'account_groups', 'account_group_permissions', 'accounts'] as const;

const { api } = useTestApi();
beforeAll(async () => {
  await seedDemoData(api.deps.knex, { password: PASSWORD });
});

/** Every row of the seeded tables, in a stable order, so two snapshots compare exactly. */
async function snapshot() {
  const rows: Record<string, unknown[]> = {};
  for (const table of TABLES) {
    const orderBy = table === 'account_group_permissions' ? ['group_id', 'permission_id'] : ['id'];
    rows[table] = await api.deps.knex(table).select('*').orderBy(orderBy);
  }
  return rows;
}

/** The permissions an access token grants, as the API reads them. */
async function permissionsOf(accessToken: string): Promise<ReadonlySet<number> | undefined> {
  return (await api.deps.tokens.verifyAccessToken(accessToken))?.permissions;
}

describe('seedDemoData', () => {
  it('changes nothing when run again', async () => {
    const before = await snapshot();
    expect(before.accounts).toHaveLength(DEMO_ACCOUNTS.length);
    expect(before.parties).toHaveLength(5);
    await seedDemoData(api.deps.knex, { password: PASSWORD });
    expect(await snapshot()).toEqual(before);
  });

  it('gives every demo account a working login', async () => {
    for (const { email } of DEMO_ACCOUNTS) {
      const tokens = await login(api, email, PASSWORD);
      const response = await api.fetch('/api/accounts/myself', { token: tokens.accessToken });
      expect(response.status, email).toBe(200);
    }
  });

  it('gives the manager every permission and the viewer only reads', async () => {
    const manager = await permissionsOf((await login(api, 'manager@example.com', PASSWORD)).accessToken);
    expect(manager).toEqual(new Set(PERMISSIONS.map((p) => p.id)));

    const viewer = await permissionsOf((await login(api, 'viewer@example.com', PASSWORD)).accessToken);
    const reads = PERMISSIONS.filter((p) => p.action === PermissionAction.Read).map((p) => p.id);
    expect(viewer).toEqual(new Set(reads));
    for (const permission of PERMISSIONS.filter((p) => p.action !== PermissionAction.Read))
      expect(viewer?.has(permission.id), permission.name).toBe(false);
  });

  it('manages the contractor and the tenant by Acme', async () => {
    const parties = await api.deps.knex('parties').select('id', 'name', 'type', 'managed_by_party_id');
    const byName = new Map(parties.map((p) => [p.name, p]));
    const acme = byName.get('Acme Property Management');
    expect(byName.get('Bolt Contractors')).toMatchObject({ type: 5, managed_by_party_id: acme.id });
    expect(byName.get('Jane Tenant')).toMatchObject({ type: 7, managed_by_party_id: acme.id });
    expect(byName.get('Platform Admin')).toMatchObject({ type: 1, managed_by_party_id: null });
    expect(byName.get('Other Homes')).toMatchObject({ type: 2, managed_by_party_id: null });
  });

  it('restores permissions taken from a demo group', async () => {
    const before = await snapshot();
    const viewer = await api.deps.knex('accounts').where('email', 'viewer@example.com').first('group_id');
    const [create, read] = PERMISSIONS;
    await api.deps
      .knex('account_group_permissions')
      .where({ group_id: viewer.group_id, permission_id: read!.id })
      .delete();
    await api.deps
      .knex('account_group_permissions')
      .insert({ group_id: viewer.group_id, permission_id: create!.id });
    await seedDemoData(api.deps.knex, { password: PASSWORD });
    expect(await snapshot()).toEqual(before);
  });

  it('takes a new password on the next run', async () => {
    const newPassword = 'Another-Demo-2?';
    await seedDemoData(api.deps.knex, { password: newPassword });
    await expect(login(api, 'tenant@example.com', PASSWORD)).rejects.toThrow(/400/);
    await login(api, 'tenant@example.com', newPassword);
    expect((await snapshot()).accounts).toHaveLength(DEMO_ACCOUNTS.length);
  });
});

describe('seedDemoRegistrations', () => {
  const seed = (echoOrigin: string) =>
    seedDemoRegistrations(api.deps.knex, { echoOrigin, secrets: api.deps.secrets });
  const registrations = () =>
    api.deps
      .knex('webhook_registrations')
      .whereNull('deleted')
      .orderBy('id')
      .select('id', 'party_id', 'target_url', 'should_group', 'signing_secret');

  it('registers the echo target for the manager, grouped and ungrouped, once', async () => {
    const secrets = await seed('http://127.0.0.1:3002');
    const rows = await registrations();
    const acme = await api.deps.knex('parties').where('name', 'Acme Property Management').first('id');
    expect(rows.map((r) => [r.party_id, r.target_url, r.should_group])).toEqual([
      [acme.id, 'http://127.0.0.1:3002/demo/ungrouped', false],
      [acme.id, 'http://127.0.0.1:3002/demo/grouped?failFirst=7', true],
    ]);
    expect(rows.map((r) => api.deps.secrets.open(r.signing_secret))).toEqual(secrets);
    const events = await api.deps.knex('webhook_events').whereIn(
      'registration_id',
      rows.map((r) => r.id),
    );
    expect(events).toHaveLength(6);

    // again: nothing new, the same secrets; another port moves the same registrations
    expect(await seed('http://127.0.0.1:3002')).toEqual(secrets);
    expect(await seed('http://127.0.0.1:4999')).toEqual(secrets);
    const moved = await registrations();
    expect(moved.map((r) => r.id)).toEqual(rows.map((r) => r.id));
    expect(moved.map((r) => r.target_url)).toEqual([
      'http://127.0.0.1:4999/demo/ungrouped',
      'http://127.0.0.1:4999/demo/grouped?failFirst=7',
    ]);
  });

  it('runs outside production only, and not with DEMO=false', () => {
    expect(demoEnabled({})).toBe(true);
    expect(demoEnabled({ NODE_ENV: 'development' })).toBe(true);
    expect(demoEnabled({ NODE_ENV: 'production' })).toBe(false);
    expect(demoEnabled({ NODE_ENV: 'production', DEMO: 'true' })).toBe(false);
    expect(demoEnabled({ NODE_ENV: 'development', DEMO: 'false' })).toBe(false);
  });
});
