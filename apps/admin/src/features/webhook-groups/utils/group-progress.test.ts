import { WebhookState } from '@platform/shared';
import { describe, expect, it } from 'vitest';
import { groupProgress, groupRefreshMs } from './group-progress';

const { Created, Retrying, Successful, Failed, Aborted, Pending, Resolved } = WebhookState;

const webhooks = (...states: WebhookState[]) => states.map((state, index) => ({ id: 10 + index, state }));

describe('group progress after releasing a blocker', () => {
  it('drains: the next is in delivery, the rest wait, then nothing is left', () => {
    // the resolved blocker (10), then one in delivery and two waiting
    expect(groupProgress(webhooks(Resolved, Created, Pending, Pending), 10)).toMatchObject({
      waiting: 2,
      inDelivery: 1,
      drained: false,
      settled: false,
    });
    expect(groupProgress(webhooks(Resolved, Successful, Successful, Successful), 10)).toMatchObject({
      delivered: 3,
      ended: 1,
      drained: true,
      settled: true,
    });
  });

  it('sees the group held again when a later webhook fails', () => {
    const progress = groupProgress(webhooks(Aborted, Successful, Failed, Pending), 10);
    expect(progress).toMatchObject({ newBlockerId: 12, waiting: 1, drained: false, settled: true });
  });

  it('does not count the released blocker as a new one (an abort that raced a retry)', () => {
    expect(groupProgress(webhooks(Failed, Created), 10).newBlockerId).toBeUndefined();
  });

  it('counts a webhook Retrying later apart from the ones in delivery', () => {
    const now = Date.parse('2026-11-27T10:00:00Z');
    const group = [
      { id: 10, state: Resolved },
      { id: 11, state: Retrying, nextAttemptAt: '2026-11-27T10:10:00Z' },
      { id: 12, state: Pending },
    ];
    expect(groupProgress(group, 10, now)).toMatchObject({
      inDelivery: 0,
      retrying: 1,
      nextRetryAt: '2026-11-27T10:10:00Z',
      waiting: 1,
      drained: false,
      settled: false,
    });
    // once due, it is in delivery
    expect(groupProgress(group, 10, Date.parse('2026-11-27T10:10:01Z'))).toMatchObject({
      inDelivery: 1,
      retrying: 0,
    });
    // read slowly while only the retry waits, often once it is due, never once settled
    expect(groupRefreshMs(groupProgress(group, 10, now))).toBe(10_000);
    expect(groupRefreshMs(groupProgress(group, 10, Date.parse('2026-11-27T10:10:01Z')))).toBe(2000);
    expect(groupRefreshMs(groupProgress([{ id: 10, state: Resolved }], 10, now))).toBe(false);
  });

  it('sees a retried blocker that failed again as holding the group again', () => {
    const group = [
      { id: 10, state: Failed },
      { id: 11, state: Pending },
    ];
    expect(groupProgress(group, 10, Date.now(), true)).toMatchObject({ newBlockerId: 10, settled: true });
    expect(groupProgress(group, 10, Date.now(), false).newBlockerId).toBeUndefined();
  });
});
