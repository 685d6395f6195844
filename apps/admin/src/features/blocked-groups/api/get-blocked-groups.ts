import type { BlockedGroupRead, Page } from '@platform/shared';
import { keepPreviousData, queryOptions, useQuery } from '@tanstack/react-query';
import { api } from '../../../lib/api';
import { queryRoots } from '../../../lib/query-keys';

/** How often the blocked groups refresh while visible: often enough to watch a group drain. */
export const BLOCKED_GROUPS_REFRESH_MS = 5000;

/** GET /api/webhook-groups?blocked=true: groups held by a Failed webhook, by blocker id. */
export function getBlockedGroups(pageNumber: number, signal?: AbortSignal) {
  return api.request<Page<BlockedGroupRead>>('/api/webhook-groups', {
    query: { blocked: true, PageNumber: pageNumber, PageSize: 50 },
    signal,
  });
}

export function getBlockedGroupsQueryOptions(pageNumber: number) {
  return queryOptions({
    queryKey: [...queryRoots.blockedGroups, pageNumber],
    queryFn: ({ signal }) => getBlockedGroups(pageNumber, signal),
    placeholderData: keepPreviousData,
    refetchInterval: BLOCKED_GROUPS_REFRESH_MS,
  });
}

/** A page of blocked groups, refreshed every 5 s while visible. */
export function useBlockedGroups(pageNumber: number) {
  return useQuery(getBlockedGroupsQueryOptions(pageNumber));
}
