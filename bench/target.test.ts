import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTarget, type Target } from './processes';
import type { DeliveryRecord } from './target';

/** A delivery as the dispatcher would POST it: webhook-id header, entity with `seq=N;` notes. */
function deliver(target: Target, webhookId: number, entityId: number, seq: number, url = target.url) {
  return fetch(url, {
    method: 'POST',
    headers: { 'content-type': 'application/json', 'webhook-id': String(webhookId) },
    body: JSON.stringify({
      entity: { id: entityId, notes: `seq=${seq};xxxx`, lastModified: '2026-01-01T00:00:00.000Z' },
      event: { type: 2, entityName: 'Property' },
    }),
  });
}

// The bench's ordering figure is only worth something if the target really sees a violation.
describe('the bench target', () => {
  let target: Target;
  beforeAll(async () => {
    target = await startTarget();
  });
  afterAll(() => target.child.stop());

  it('answers 200 and counts every delivery without inspecting', async () => {
    await target.reset(false);
    for (let id = 1; id <= 3; id++) expect((await deliver(target, id, 1, 3 - id)).status).toBe(200);
    expect(await target.stats()).toMatchObject({ received: 3, orderViolations: 0, duplicates: 0 });
    expect(await target.records()).toEqual([]);
  });

  it('counts a delivery older than one already received for its entity as an order violation', async () => {
    await target.reset(true);
    await deliver(target, 1, 7, 1);
    await deliver(target, 2, 8, 1);
    await deliver(target, 4, 7, 3);
    await deliver(target, 3, 7, 2); // seq 2 of entity 7 after its seq 3
    await deliver(target, 5, 8, 2);
    expect(await target.stats()).toMatchObject({ received: 5, orderViolations: 1, duplicates: 0 });
  });

  it('counts a redelivered webhook id as a duplicate, not as a violation', async () => {
    await target.reset(true);
    await deliver(target, 1, 7, 1);
    await deliver(target, 2, 7, 2);
    await deliver(target, 1, 7, 1);
    expect(await target.stats()).toMatchObject({ received: 3, orderViolations: 0, duplicates: 1 });
    const records = await target.records<DeliveryRecord[]>();
    expect(records.map(([webhookId, , entityId, seq]) => [webhookId, entityId, seq])).toEqual([
      [1, 7, 1],
      [2, 7, 2],
    ]);
    expect(records[0]![4]).toBe(Date.parse('2026-01-01T00:00:00.000Z'));
    expect(records[0]![1]).toBeGreaterThan(Date.now() - 60_000);
  });

  it('listens on as many origins as told, counting the deliveries to all of them in one round', async () => {
    const several = await startTarget(3);
    try {
      expect(new Set(several.urls.map((url) => new URL(url).port)).size).toBe(3);
      expect(several.urls[0]).toBe(several.url);
      await several.reset(true);
      for (const [index, url] of several.urls.entries())
        expect((await deliver(several, index + 1, index + 1, 1, url)).status).toBe(200);
      expect(await several.stats()).toMatchObject({ received: 3, orderViolations: 0, duplicates: 0 });
      const records = await several.records<DeliveryRecord[]>();
      expect(records.map(([webhookId]) => webhookId)).toEqual([1, 2, 3]);
    } finally {
      await several.child.stop();
    }
  });

  it('leaves a POST to the hanging path unanswered, counting it apart, and answers every other path', async () => {
    const host = await startTarget(1, '/dead');
    try {
      await host.reset(true);
      const origin = new URL(host.url).origin;
      const unanswered = deliver(host, 1, 1, 1, `${origin}/dead`).then(
        () => 'answered',
        () => 'aborted',
      );
      expect((await deliver(host, 2, 2, 1, `${origin}/tenant-1`)).status).toBe(200);
      await new Promise((resolve) => setTimeout(resolve, 300));
      expect(await host.stats()).toMatchObject({ received: 1, hung: 1 });
      expect((await host.records<DeliveryRecord[]>()).map(([webhookId]) => webhookId)).toEqual([2]);
      // stopping the target closes the connection it left hanging: the request fails, unanswered
      await host.child.stop();
      expect(await unanswered).toBe('aborted');
    } finally {
      await host.child.stop();
    }
  });
});
