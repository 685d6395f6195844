import type { Knex } from 'knex';
import { CLAIMABLE_WEBHOOK_STATES } from '@platform/shared';
import { prepared } from './prepared';
import { sqlList } from './sql';

/**
 * A claimed webhook with everything one delivery needs, as `webhooks_lease` (migration
 * 20261125000000) answers it: JSON, so its times are ISO strings.
 */
export interface ClaimedWebhook {
  id: number;
  registration_id: number;
  /** The attempt this delivery is (attempt_count after the claim). */
  attempt: number;
  group_key: string | null;
  target_url: string;
  auth_type: number;
  auth_credentials: string | null;
  signing_secret: string;
  registration_party_id: number;
  should_group_continue_after_fail: boolean;
  /** The registration was deleted after this webhook was written: the claim aborted it, do not deliver. */
  registration_deleted: boolean;
  entity: unknown;
  initiator_party_id: number;
  initiator_account_id: number | null;
  event_id: number;
  event_type: number;
  event_entity_name: string;
  event_created: string;
  event_last_modified: string | null;
  event_deleted: string | null;
}

const CLAIM = `select webhooks_lease(array(
       select id from webhooks
        where state in (${sqlList(CLAIMABLE_WEBHOOK_STATES)}) and next_attempt_at <= now()
        order by next_attempt_at
        limit ?
          for update skip locked
     ), ?, ?) as leased`;

/**
 * Claims up to `batch` due webhooks in one statement (design part 3): due heads and ungrouped rows
 * (Created, Retrying; blocked rows are never in those states) in `next_attempt_at` order, skipping rows
 * another dispatcher holds, and leases them (`webhooks_lease`) by pushing `next_attempt_at` to
 * now + lease. A dispatcher that dies loses its lease and the rows become due again
 * (at-least-once delivery). The selection reads only the `webhooks_due` index.
 */
export async function claimWebhooks(
  knex: Knex,
  options: { batch: number; leaseMs: number; dispatcherId: string },
): Promise<ClaimedWebhook[]> {
  const { rows } = await knex
    .raw<{ rows: { leased: ClaimedWebhook[] }[] }>(CLAIM, [
      options.batch,
      options.dispatcherId,
      options.leaseMs,
    ])
    .options(prepared('webhooks-claim'));
  return rows[0]!.leased;
}
