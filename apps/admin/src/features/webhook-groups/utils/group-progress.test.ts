import type { WebhookGroupProgressRead } from '@platform/shared';
import { describe, expect, it } from 'vitest';
import { groupProgress, groupRefreshMs } from './group-progress';

const read = (figures: Partial<WebhookGroupProgressRead>): WebhookGroupProgressRead => ({
  registrationId: 1,
  groupKey: 'Property:1',
  fromWebhookId: 10,
  waiting: 0,
  inDelivery: 0,
  retrying: 0,
  nextRetryAt: null,
  delivered: 0,
  ended: 0,
  heldBy: null,
  generatedAt: '2026-11-27T10:00:00Z',
  ...figures,
});

describe('group progress', () => {
  it('drains: counts as the API answers them, however many', () => {
    expect(groupProgress(read({ waiting: 1_232, inDelivery: 1 }))).toMatchObject({
      waiting: 1_232,
      inDelivery: 1,
      drained: false,
      settled: false,
    });
    expect(groupProgress(read({ delivered: 1_301 }))).toMatchObject({
      delivered: 1_301,
      drained: true,
      settled: true,
    });
  });

  it('is held again once a Failed webhook holds the group, with 1,104 stuck behind it', () => {
    const progress = groupProgress(read({ waiting: 1_104, delivered: 127, heldBy: 140 }));
    expect(progress).toMatchObject({ newBlockerId: 140, drained: false, settled: true });
    expect(groupRefreshMs(progress)).toBe(false);
  });

  it('reads slowly while only a retry waits for its next attempt', () => {
    const later = read({ retrying: 1, waiting: 3, nextRetryAt: '2026-11-27T10:10:00Z' });
    expect(groupProgress(later)).toMatchObject({ retrying: 1, nextRetryAt: '2026-11-27T10:10:00Z' });
    expect(groupRefreshMs(groupProgress(later))).toBe(10_000);
    expect(groupRefreshMs(groupProgress(read({ inDelivery: 1 })))).toBe(2000);
  });
});
