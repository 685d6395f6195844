import type { AccountRead } from '@platform/shared';
import { queryOptions, useQuery } from '@tanstack/react-query';
import { api } from '../../../lib/api';

/** GET /api/accounts/{id}: who an audit entry's account is (its email), when the operator may see it. */
export function getAccount(id: number, signal?: AbortSignal) {
  return api.request<AccountRead>(`/api/accounts/${id}`, { signal });
}

export function getAccountQueryOptions(id: number) {
  return queryOptions({
    queryKey: ['accounts', 'detail', id],
    queryFn: ({ signal }) => getAccount(id, signal),
    // an email rarely changes; one read per account per visit is plenty
    staleTime: Infinity,
    // an account outside the operator's scope answers 404: show its id, do not ask again
    retry: false,
  });
}

/** One account, read once per session; absent (id only) when the API does not show it. */
export function useAccount(id: number | null) {
  return useQuery({ ...getAccountQueryOptions(id ?? 0), enabled: id !== null });
}
