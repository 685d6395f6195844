import type { AccountRead, PartyRead } from '@platform/shared';
import { queryOptions, useQuery } from '@tanstack/react-query';
import { api } from '../../../lib/api';

/**
 * Who initiated a change, by name: the account (GET /api/accounts/{id}) and its party
 * (GET /api/accounts/{id}/party). The API has no read of a party by id, so a change without an
 * initiating account keeps showing its party id. Either read may be refused (the account is of
 * a party the operator does not see, or was deleted): the page then shows the ids.
 */
export async function getInitiator(accountId: number, signal?: AbortSignal) {
  const [account, party] = await Promise.all([
    api.request<AccountRead>(`/api/accounts/${accountId}`, { signal }).catch(() => undefined),
    api.request<PartyRead>(`/api/accounts/${accountId}/party`, { signal }).catch(() => undefined),
  ]);
  return { account, party };
}

export function getInitiatorQueryOptions(accountId: number) {
  return queryOptions({
    queryKey: ['accounts', accountId, 'with-party'],
    queryFn: ({ signal }) => getInitiator(accountId, signal),
    staleTime: 5 * 60_000,
  });
}

/** The initiating account and its party, when the change has an account (else nothing is read). */
export function useInitiator(accountId: number | null) {
  return useQuery({ ...getInitiatorQueryOptions(accountId ?? 0), enabled: accountId !== null });
}
