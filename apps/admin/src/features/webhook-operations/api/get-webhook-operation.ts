import type { WebhookOperationRead } from '@platform/shared';
import { queryOptions, useQuery, useQueryClient } from '@tanstack/react-query';
import { useEffect, useRef } from 'react';
import { api } from '../../../lib/api';
import { queryRoots } from '../../../lib/query-keys';

/** How often a running operation is read again. */
export const OPERATION_POLL_MS = 1000;

export const operationQueryKey = (id: number) => [...queryRoots.operations, id] as const;

/** GET /api/webhook-operations/{id}. */
export function readOperation(id: number, signal?: AbortSignal): Promise<WebhookOperationRead> {
  return api.request<WebhookOperationRead>(`/api/webhook-operations/${id}`, { signal });
}

export function getOperationQueryOptions(id: number) {
  return queryOptions({
    queryKey: operationQueryKey(id),
    queryFn: ({ signal }) => readOperation(id, signal),
    // polled while running; a finished operation never changes again
    refetchInterval: (query) => (query.state.data?.state === 'running' ? OPERATION_POLL_MS : false),
    // keep following it while the operator looks at another tab: it is the one thing they wait for
    refetchIntervalInBackground: true,
    staleTime: (query) => (query.state.data && query.state.data.state !== 'running' ? Infinity : 0),
  });
}

/** The views an operation's changes show in (every webhook view, groups, overview, registrations). */
const CHANGED_BY_OPERATIONS = [
  queryRoots.webhooks,
  queryRoots.blockedGroups,
  queryRoots.webhookStats,
  queryRoots.registrations,
];

/**
 * Follows operation `id` (undefined: none yet) until it is `done` or `failed`, reading it every
 * second while it runs. Once a real (not dry-run) operation is seen finished, the webhook views,
 * the blocked groups, the overview and the registrations refetch, so they show what it changed.
 */
export function useOperation(id: number | undefined) {
  const queryClient = useQueryClient();
  const query = useQuery({ ...getOperationQueryOptions(id ?? 0), enabled: id !== undefined });
  const operation = query.data;
  const refreshedFor = useRef<number | undefined>(undefined);
  useEffect(() => {
    if (!operation || operation.state === 'running' || operation.dryRun) return;
    if (refreshedFor.current === operation.id) return;
    refreshedFor.current = operation.id;
    for (const queryKey of CHANGED_BY_OPERATIONS) void queryClient.invalidateQueries({ queryKey });
  }, [operation, queryClient]);
  return query;
}
