import { WebhookState, type BlockedGroupRead, type Page } from '@platform/shared';
import type { z } from 'zod';
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
