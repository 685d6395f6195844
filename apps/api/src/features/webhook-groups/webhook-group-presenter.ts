import type { BlockedGroupRead } from '@platform/shared';

export interface BlockedGroupRow {
  registration_id: number;
  party_id: number;
  group_key: string;
  blocker_webhook_id: number;
  blocked_since: Date | null;
  pending_count: number;
  oldest_pending_created: Date | null;
}

/** The BlockedGroupRead shape of a blocked-group row. */
export function presentBlockedGroup(row: BlockedGroupRow): BlockedGroupRead {
  return {
    registrationId: row.registration_id,
    partyId: row.party_id,
    groupKey: row.group_key,
    blockerWebhookId: row.blocker_webhook_id,
    blockedSince: row.blocked_since?.toISOString() ?? null,
    pendingCount: row.pending_count,
    oldestPendingCreated: row.oldest_pending_created?.toISOString() ?? null,
  };
}
