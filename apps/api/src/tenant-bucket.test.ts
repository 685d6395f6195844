import { SHARED_BUCKETS } from '@platform/db';
import type { PartyRead } from '@platform/shared';
import { describe, expect, it } from 'vitest';
import { useTestApi } from '../tests/support/api';
import { postOk } from '../tests/support/resources';
import { createProperty, patchProperty, register } from '../tests/support/webhooks';

// every write of the API puts its rows in the tenant's bucket (docs/scaling.md › Buckets, shards
// and the directory), the distribution column of the Citus design; nothing reads it yet on one
// database, and the partitioned layout (packages/db/src/emulation) refuses a row without it
const { api, world } = useTestApi({ world: true, truncateWebhooks: true });

const bucketOf = async (table: string, where: Record<string, unknown>) =>
  ((await api.db.knex(table).where(where).first('bucket')) as { bucket: number | null }).bucket;

describe('the tenant bucket on every write', () => {
  it("gives a new unmanaged party its own bucket and a managed party its manager's", async () => {
    const pmc = await postOk<PartyRead>(api, '/api/parties', world.admin.full.token, {
      type: 2,
      name: 'Nordhaus',
    });
    expect(await bucketOf('parties', { id: pmc.id })).toBe(pmc.id % SHARED_BUCKETS);
    const managed = await postOk<PartyRead>(api, '/api/parties', world.pmc.full.token, {
      type: 5,
      name: 'Bauer Sanitär',
    });
    expect(managed.managedByPartyId).toBe(world.pmc.id);
    expect(await bucketOf('parties', { id: managed.id })).toBe(world.pmc.id % SHARED_BUCKETS);
    // an Admin placing a new party under a manager puts it in the manager's bucket too
    const placed = await postOk<PartyRead>(api, '/api/parties', world.admin.full.token, {
      type: 7,
      name: 'Mieter',
      managedByPartyId: pmc.id,
    });
    expect(await bucketOf('parties', { id: placed.id })).toBe(pmc.id % SHARED_BUCKETS);
  });

  it("writes a registration, its endpoint, its events and a change's webhooks and groups in the party's bucket", async () => {
    const token = world.pmc.full.token;
    const bucket = await bucketOf('parties', { id: world.pmc.id });
    expect(bucket).toBe(world.pmc.id % SHARED_BUCKETS);
    const registration = await register(api, token, {
      shouldGroup: true,
      enabledEvents: [
        { entityName: 'Property', type: 1 },
        { entityName: 'Property', type: 2 },
      ],
    });
    const row = (await api.db.knex('webhook_registrations').where({ id: registration.id }).first()) as {
      bucket: number;
      target_id: number;
    };
    expect(row.bucket).toBe(bucket);
    expect(await bucketOf('webhook_targets', { id: row.target_id })).toBe(bucket);
    const events = await api.db
      .knex('webhook_events')
      .where({ registration_id: registration.id })
      .select('bucket');
    expect(events.map((e: { bucket: number }) => e.bucket)).toEqual([bucket, bucket]);

    const property = await createProperty(api, token);
    await patchProperty(api, token, property, { city: 'Bremen' });
    const webhooks = await api.db
      .knex('webhooks')
      .where({ registration_id: registration.id })
      .select('bucket', 'group_key');
    expect(webhooks).toEqual([
      { bucket, group_key: `Property:${property}` },
      { bucket, group_key: `Property:${property}` },
    ]);
    expect(await bucketOf('webhook_groups', { registration_id: registration.id })).toBe(bucket);
  });
});
