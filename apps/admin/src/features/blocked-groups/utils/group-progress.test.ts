import { WebhookState } from '@platform/shared';
import { describe, expect, it } from 'vitest';
import { groupProgress } from './group-progress';

const { Created, Successful, Failed, Aborted, Pending, Resolved } = WebhookState;

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
});
