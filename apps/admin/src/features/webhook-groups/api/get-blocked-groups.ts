import type { BlockedGroupRead, Page } from '@platform/shared';
import { keepPreviousData, queryOptions, useQuery } from '@tanstack/react-query';
import { api } from '../../../lib/api';
import { queryRoots } from '../../../lib/query-keys';

/** How often the blocked groups refresh while visible: often enough to watch a group drain. */
export const BLOCKED_GROUPS_REFRESH_MS = 5000;

/** GET /api/webhook-groups?blocked=true: groups held by a Failed webhook, by blocker id. */
export function getBlockedGroups(pageNumber: number, registrationId?: number, signal?: AbortSignal) {
  return api.request<Page<BlockedGroupRead>>('/api/webhook-groups', {
    query: { blocked: true, registrationId, PageNumber: pageNumber, PageSize: 50 },
    signal,
  });
}

export function getBlockedGroupsQueryOptions(pageNumber: number, registrationId?: number) {
  return queryOptions({
    queryKey: [...queryRoots.blockedGroups, pageNumber, registrationId ?? 'all'],
    queryFn: ({ signal }) => getBlockedGroups(pageNumber, registrationId, signal),
    placeholderData: keepPreviousData,
    refetchInterval: BLOCKED_GROUPS_REFRESH_MS,
  });
}

/** A page of blocked groups (of one registration, or all), refreshed every 5 s while visible. */
export function useBlockedGroups(pageNumber: number, registrationId?: number) {
  return useQuery(getBlockedGroupsQueryOptions(pageNumber, registrationId));
}
