import type { AccountRead } from '@platform/shared';
import { queryOptions, useQuery } from '@tanstack/react-query';
import { api } from '../../../lib/api';

/**
 * The account that initiated a change, by name (GET /api/accounts/{id}); the webhook itself names
 * the initiating party (`initiatorPartyName`). The read may be refused (the account is of a party
 * the operator does not see, or was deleted): the page then shows the account id.
 */
export async function getInitiatorAccount(accountId: number, signal?: AbortSignal) {
  return api.request<AccountRead>(`/api/accounts/${accountId}`, { signal }).catch(() => undefined);
}

export function getInitiatorAccountQueryOptions(accountId: number) {
  return queryOptions({
    queryKey: ['accounts', accountId, 'initiator'],
    queryFn: ({ signal }) => getInitiatorAccount(accountId, signal),
    staleTime: 5 * 60_000,
  });
}

/** The initiating account, when the change has one (else nothing is read). */
export function useInitiatorAccount(accountId: number | null) {
  return useQuery({ ...getInitiatorAccountQueryOptions(accountId ?? 0), enabled: accountId !== null });
}
