import {
  WebhookState,
  type BlockedGroupRead,
  type Page,
  type WebhookGroupProgressRead,
} from '@platform/shared';
import { AppError } from '../../http/errors';
import { z } from 'zod';
import type { Principal } from '../../auth/principal';
import type { AppDeps } from '../../deps';
import { paginate, PageQuery } from '../../http/pagination';
import { scopeToParties } from '../../http/scope';
import { queryBoolean, wholeNumberText } from '../../http/validate';
import { presentBlockedGroup, type BlockedGroupRow } from './webhook-group-presenter';

/** GET /api/webhook-groups: only blocked groups are listed today, so `blocked=true` is required. */
export const BlockedGroupQuery = PageQuery.extend({
  blocked: queryBoolean
    .refine((blocked) => blocked, 'must be true: only blocked groups can be listed')
    .meta({ description: 'Must be true: groups held by a Failed webhook.' }),
  registrationId: wholeNumberText('registrationId', 1, 2147483647).optional(),
});
export type BlockedGroupQuery = z.infer<typeof BlockedGroupQuery>;

/**
 * Groups of visible live registrations held by a Failed webhook of a registration without
 * shouldGroupContinueAfterFail: the blocker, how many wait behind it, and the oldest of those.
 */
export function listBlockedGroups(
  deps: AppDeps,
  principal: Principal,
  query: BlockedGroupQuery,
): Promise<Page<BlockedGroupRead>> {
  const { knex } = deps;
  const pending = () =>
    knex('webhooks as p')
      .whereRaw('p.registration_id = w.registration_id and p.group_key = w.group_key')
      .where('p.state', WebhookState.Pending);
  const groups = knex('webhooks as w')
    .join('webhook_registrations as r', 'r.id', 'w.registration_id')
    .select(
      'w.registration_id',
      'r.party_id',
      'w.group_key',
      'w.id as blocker_webhook_id',
      knex.raw('coalesce(w.completed_at, w.last_modified) as blocked_since'),
      pending().count('*').as('pending_count'),
      pending().min('p.created').as('oldest_pending_created'),
    )
    .where('w.state', WebhookState.Failed)
    .whereNotNull('w.group_key')
    .where('r.should_group_continue_after_fail', false)
    .whereNull('r.deleted')
    .orderBy('w.id');
  if (query.registrationId !== undefined) groups.where('w.registration_id', query.registrationId);
  return paginate(scopeToParties(groups, 'r.party_id', principal), query, (row: BlockedGroupRow) =>
    presentBlockedGroup({ ...row, pending_count: Number(row.pending_count) }),
  );
}

/** GET /api/webhook-groups/progress: which group, and from which (released) webhook on. */
export const GroupProgressQuery = z.object({
  registrationId: wholeNumberText('registrationId', 1, 2147483647),
  groupKey: z.string().min(1, 'groupKey must not be empty').max(300, 'groupKey is at most 300 characters'),
  fromWebhookId: wholeNumberText('fromWebhookId', 1, Number.MAX_SAFE_INTEGER),
});
export type GroupProgressQuery = z.infer<typeof GroupProgressQuery>;

const { Created, Retrying, Successful, Failed, Aborted, Pending, Resolved } = WebhookState;

/**
 * Where one group of a visible live registration stands after its blocker `fromWebhookId` was
 * retried, resolved or aborted, counted exactly in one statement (not a page of its webhooks):
 * waiting (Pending, index `webhooks_pending`), in delivery and Retrying later (states 1-2, index
 * `webhooks_group_heads`), held again (a Failed webhook from the blocker on, `webhooks_blocking`),
 * and delivered and ended from the blocker on: the registration's webhooks with ids from the
 * blocker's on (`webhooks_registration`), so its cost grows with the registration's traffic since
 * the blocker was written, not with its whole history. 404 for a registration out of scope.
 */
export async function readGroupProgress(
  deps: AppDeps,
  principal: Principal,
  query: GroupProgressQuery,
): Promise<WebhookGroupProgressRead> {
  const { knex } = deps;
  const visible = await scopeToParties(
    knex('webhook_registrations as r').where('r.id', query.registrationId).whereNull('r.deleted'),
    'r.party_id',
    principal,
  ).first('r.id');
  if (!visible) throw new AppError('NotFound', `Webhook registration ${query.registrationId} was not found`);
  const { rows } = await knex.raw<{
    rows: {
      waiting: number;
      in_delivery: number;
      retrying: number;
      next_retry_at: Date | null;
      delivered: number;
      ended: number;
      held_by: string | null;
      now: Date;
    }[];
  }>(
    `select (select count(*)::int from webhooks
              where registration_id = :rid and group_key = :key and state = ${Pending}) as waiting,
            h.in_delivery, h.retrying, h.next_retry_at,
            d.delivered, d.ended,
            (select min(id) from webhooks
              where registration_id = :rid and group_key = :key and state = ${Failed} and id >= :from) as held_by,
            now() as now
       from (select (count(*) filter (where state = ${Created} or next_attempt_at <= now() or locked_by is not null))::int as in_delivery,
                    (count(*) filter (where state = ${Retrying} and next_attempt_at > now() and locked_by is null))::int as retrying,
                    min(next_attempt_at) filter (where state = ${Retrying} and next_attempt_at > now() and locked_by is null) as next_retry_at
               from webhooks
              where registration_id = :rid and group_key = :key and state in (${Created}, ${Retrying})) h,
            (select (count(*) filter (where state = ${Successful}))::int as delivered,
                    (count(*) filter (where state in (${Aborted}, ${Resolved})))::int as ended
               from webhooks
              where registration_id = :rid and id >= :from and group_key = :key) d`,
    { rid: query.registrationId, key: query.groupKey, from: query.fromWebhookId },
  );
  const row = rows[0]!;
  return {
    registrationId: query.registrationId,
    groupKey: query.groupKey,
    fromWebhookId: query.fromWebhookId,
    waiting: row.waiting,
    inDelivery: row.in_delivery,
    retrying: row.retrying,
    nextRetryAt: row.next_retry_at?.toISOString() ?? null,
    delivered: row.delivered,
    ended: row.ended,
    heldBy: row.held_by === null ? null : Number(row.held_by),
    generatedAt: row.now.toISOString(),
  };
}
