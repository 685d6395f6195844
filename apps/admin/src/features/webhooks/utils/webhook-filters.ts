import { webhookEntityName, WebhookState } from '@platform/shared';

/** The filters and page of the webhooks table, as kept in the address bar. */
export interface WebhookFilters {
  state?: number;
  registrationId?: number;
  entityName?: string;
  entityId?: number;
  /** ISO instants; `createdTo` is exclusive, as the API reads it. */
  createdFrom?: string;
  createdTo?: string;
  page: number;
  pageSize: number;
}

export const PAGE_SIZES = [20, 50, 100] as const;
export const DEFAULT_PAGE_SIZE = 20;

const positiveInt = (text: string | null, max = 2_147_483_647): number | undefined => {
  if (!text || !/^[1-9]\d*$/.test(text)) return undefined;
  const value = Number(text);
  return value <= max ? value : undefined;
};
const instant = (text: string | null): string | undefined =>
  text && !Number.isNaN(Date.parse(text)) ? new Date(text).toISOString() : undefined;

/** The filters of a query string; values the API would refuse are dropped, not sent. */
export function filtersFromSearch(params: URLSearchParams): WebhookFilters {
  const state = positiveInt(params.get('state'), WebhookState.Resolved);
  const pageSize = positiveInt(params.get('pageSize'));
  const entityName = params.get('entityName');
  return {
    state,
    registrationId: positiveInt(params.get('registrationId')),
    entityName: entityName ? webhookEntityName(entityName) : undefined,
    entityId: positiveInt(params.get('entityId')),
    createdFrom: instant(params.get('createdFrom')),
    createdTo: instant(params.get('createdTo')),
    page: positiveInt(params.get('page'), 1_000_000) ?? 1,
    pageSize: PAGE_SIZES.find((size) => size === pageSize) ?? DEFAULT_PAGE_SIZE,
  };
}

/** The query string (with `?`, or empty) of filters; defaults are left out. */
export function filtersToSearch(filters: WebhookFilters): string {
  const params = new URLSearchParams();
  if (filters.state !== undefined) params.set('state', String(filters.state));
  if (filters.registrationId !== undefined) params.set('registrationId', String(filters.registrationId));
  if (filters.entityName) params.set('entityName', filters.entityName);
  if (filters.entityId !== undefined) params.set('entityId', String(filters.entityId));
  if (filters.createdFrom) params.set('createdFrom', filters.createdFrom);
  if (filters.createdTo) params.set('createdTo', filters.createdTo);
  if (filters.page > 1) params.set('page', String(filters.page));
  if (filters.pageSize !== DEFAULT_PAGE_SIZE) params.set('pageSize', String(filters.pageSize));
  const text = params.toString();
  return text ? `?${text}` : '';
}

/** The GET /api/webhooks query of filters: newest first. */
export function filtersToApiQuery(
  filters: WebhookFilters,
): Record<string, string | number | boolean | undefined> {
  return {
    state: filters.state,
    registrationId: filters.registrationId,
    entityName: filters.entityName,
    entityId: filters.entityId,
    createdFrom: filters.createdFrom,
    createdTo: filters.createdTo,
    PageNumber: filters.page,
    PageSize: filters.pageSize,
    SortByAttributeName: 'id',
    AscendingOrder: false,
  };
}

/** How many filters (not paging) are set. */
export function activeFilterCount(filters: WebhookFilters): number {
  return [
    filters.state,
    filters.registrationId,
    filters.entityName,
    filters.entityId,
    filters.createdFrom,
    filters.createdTo,
  ].filter((value) => value !== undefined && value !== '').length;
}

/** Why the time range cannot be asked for, or undefined. */
export function timeRangeProblem(
  filters: Pick<WebhookFilters, 'createdFrom' | 'createdTo'>,
): string | undefined {
  if (
    filters.createdFrom &&
    filters.createdTo &&
    Date.parse(filters.createdFrom) > Date.parse(filters.createdTo)
  ) {
    return '“Created before” must not be earlier than “Created from”.';
  }
  return undefined;
}
