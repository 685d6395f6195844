/** The blocked groups' address: `/webhook-groups?registrationId=&page=`. */
export interface BlockedGroupsQuery {
  registrationId?: number;
  page: number;
}

const positiveInt = (text: string | null, max = 2_147_483_647): number | undefined => {
  if (!text || !/^[1-9]\d*$/.test(text)) return undefined;
  const value = Number(text);
  return value <= max ? value : undefined;
};

/** The query of the blocked groups' address; values the API would refuse are dropped. */
export function blockedGroupsQueryFromSearch(params: URLSearchParams): BlockedGroupsQuery {
  return {
    registrationId: positiveInt(params.get('registrationId')),
    page: positiveInt(params.get('page'), 1_000_000) ?? 1,
  };
}

/** The search (with `?`, or empty) of a blocked groups query; defaults are left out. */
export function blockedGroupsQueryToSearch(query: BlockedGroupsQuery): string {
  const params = new URLSearchParams();
  if (query.registrationId !== undefined) params.set('registrationId', String(query.registrationId));
  if (query.page > 1) params.set('page', String(query.page));
  const text = params.toString();
  return text ? `?${text}` : '';
}
