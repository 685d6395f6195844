import type { AccountRead } from '@platform/shared';
import { queryOptions, useQuery } from '@tanstack/react-query';
import { apiFetch } from '../../../lib/api-client';

export function getMyself(token: string): Promise<AccountRead> {
  return apiFetch<AccountRead>('/api/accounts/myself', { token });
}

export function getMyselfQueryOptions(token: string) {
  return queryOptions({ queryKey: ['accounts', 'myself', token], queryFn: () => getMyself(token) });
}

/** The signed-in operator's account. */
export function useMyself(token: string) {
  return useQuery(getMyselfQueryOptions(token));
}
