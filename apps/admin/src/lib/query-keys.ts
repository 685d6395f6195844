/**
 * The roots of every query key. Features build their keys under these, so a mutation in one
 * feature can invalidate what another shows without importing it.
 */
export const queryRoots = {
  webhookStats: ['webhook-stats'],
  webhooks: ['webhooks'],
  registrations: ['webhook-registrations'],
  blockedGroups: ['webhook-groups', 'blocked'],
  operations: ['webhook-operations'],
  operatorActions: ['operator-actions'],
} as const;
