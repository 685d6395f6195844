import type { OperatorActionRead, Page } from '@platform/shared';
import { keepPreviousData, queryOptions, useQuery } from '@tanstack/react-query';
import { api } from '../../../lib/api';
import { queryRoots } from '../../../lib/query-keys';
import { operatorActionApiQuery, type OperatorActionQuery } from '../utils/operator-actions';

/** How often the audit page reads the trail again (running operations fill in their counts). */
export const AUDIT_REFRESH_MS = 10_000;

/** GET /api/operator-actions: the audit trail, newest first. */
export function getOperatorActions(query: OperatorActionQuery, signal?: AbortSignal) {
  return api.request<Page<OperatorActionRead>>('/api/operator-actions', {
    query: operatorActionApiQuery(query),
    signal,
  });
}

export function getOperatorActionsQueryOptions(query: OperatorActionQuery) {
  return queryOptions({
    queryKey: [...queryRoots.operatorActions, 'list', query],
    queryFn: ({ signal }) => getOperatorActions(query, signal),
    placeholderData: keepPreviousData,
    refetchInterval: AUDIT_REFRESH_MS,
  });
}

/** A page of the audit trail, refreshed every 10 s while visible. */
export function useOperatorActions(query: OperatorActionQuery) {
  return useQuery(getOperatorActionsQueryOptions(query));
}
