import { webhookEntityName, WebhookState, type WebhookBulkFilter } from '@platform/shared';
import { formatDateTimeWithZone } from '../../../lib/format';
import { webhookStateName } from '../../../lib/webhook-states';

/**
 * What GET /api/webhooks sorts by (WEBHOOK_COLLECTION.sortable in the API), with the label the
 * table shows. The default order is `id`, newest first.
 */
export const WEBHOOK_SORT_FIELDS = {
  id: 'ID',
  registrationId: 'Registration',
  state: 'State',
  entityName: 'Entity name',
  attemptCount: 'Attempts',
  created: 'Created',
  lastModified: 'Last modified',
  completedAt: 'Completed',
  nextAttemptAt: 'Next attempt',
} as const;
export type WebhookSortField = keyof typeof WEBHOOK_SORT_FIELDS;
export const DEFAULT_SORT: WebhookSortField = 'id';

const isSortField = (text: string | null): text is WebhookSortField =>
  text !== null && Object.hasOwn(WEBHOOK_SORT_FIELDS, text);

/** The filters and page of the webhooks table, as kept in the address bar. */
export interface WebhookFilters {
  /** The search (GET /api/webhooks `q`): payload text, or a webhook, change or entity id. */
  q?: string;
  state?: number;
  registrationId?: number;
  entityName?: string;
  entityId?: number;
  /** ISO instants; `createdTo` is exclusive, as the API reads it. */
  createdFrom?: string;
  createdTo?: string;
  /** The sort field, `id` when absent; `ascending` true for oldest/smallest first. */
  sort?: WebhookSortField;
  ascending?: boolean;
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
/** The shortest payload text the API searches (a shorter word prefix would match too many words). */
export const SEARCH_MIN = 3;
/** A search the API takes: a whole number (an id), or 3 to 200 characters of payload text. */
export const searchText = (text: string | null): string | undefined => {
  const trimmed = text?.trim() ?? '';
  if (trimmed === '' || trimmed.length > 200) return undefined;
  return /^\d+$/.test(trimmed) || trimmed.length >= SEARCH_MIN ? trimmed : undefined;
};
const instant = (text: string | null): string | undefined =>
  text && !Number.isNaN(Date.parse(text)) ? new Date(text).toISOString() : undefined;

/** The filters of a query string; values the API would refuse are dropped, not sent. */
export function filtersFromSearch(params: URLSearchParams): WebhookFilters {
  const state = positiveInt(params.get('state'), WebhookState.Resolved);
  const pageSize = positiveInt(params.get('pageSize'));
  const entityName = params.get('entityName');
  return {
    q: searchText(params.get('q')),
    state,
    registrationId: positiveInt(params.get('registrationId')),
    entityName: entityName ? webhookEntityName(entityName) : undefined,
    entityId: positiveInt(params.get('entityId')),
    createdFrom: instant(params.get('createdFrom')),
    createdTo: instant(params.get('createdTo')),
    ...sortFromSearch(params),
    page: positiveInt(params.get('page'), 1_000_000) ?? 1,
    pageSize: PAGE_SIZES.find((size) => size === pageSize) ?? DEFAULT_PAGE_SIZE,
  };
}

/**
 * What the address asks that `filtersFromSearch` had to ignore, one phrase per parameter (empty
 * when it read everything): a link with `?state=99` or `?createdFrom=notadate` would otherwise
 * show every webhook as if unfiltered, without a word.
 */
export function ignoredParams(params: URLSearchParams): string[] {
  const filters = filtersFromSearch(params);
  const given = (name: string) => {
    const value = params.get(name);
    return value === null || value === '' ? undefined : value;
  };
  const problems: string[] = [];
  const check = (name: string, read: boolean, rule: string) => {
    const value = given(name);
    if (value !== undefined && !read) problems.push(`${name} "${value}" (${rule})`);
  };
  check(
    'q',
    filters.q !== undefined,
    `a search is an id, or ${SEARCH_MIN} to 200 characters of payload text`,
  );
  check('state', filters.state !== undefined, `not a state: 1 Created … ${WebhookState.Resolved} Resolved`);
  check('registrationId', filters.registrationId !== undefined, 'not a registration id');
  check('entityName', filters.entityName !== undefined, 'not an entity webhooks are sent for');
  check('entityId', filters.entityId !== undefined, 'not an entity id');
  check('createdFrom', filters.createdFrom !== undefined, 'not a date and time');
  check('createdTo', filters.createdTo !== undefined, 'not a date and time');
  check(
    'sort',
    isSortField(given('sort') ?? null),
    `not a column to sort by: ${Object.keys(WEBHOOK_SORT_FIELDS).join(', ')}`,
  );
  check('order', ['asc', 'desc'].includes(given('order') ?? ''), 'asc or desc');
  check('page', positiveInt(given('page') ?? null, 1_000_000) !== undefined, 'not a page number');
  check(
    'pageSize',
    PAGE_SIZES.some((size) => String(size) === given('pageSize')),
    `one of ${PAGE_SIZES.join(', ')}`,
  );
  return problems;
}

/** The query string (with `?`, or empty) of filters; defaults are left out. */
export function filtersToSearch(filters: WebhookFilters): string {
  const params = new URLSearchParams();
  if (filters.q) params.set('q', filters.q);
  if (filters.state !== undefined) params.set('state', String(filters.state));
  if (filters.registrationId !== undefined) params.set('registrationId', String(filters.registrationId));
  if (filters.entityName) params.set('entityName', filters.entityName);
  if (filters.entityId !== undefined) params.set('entityId', String(filters.entityId));
  if (filters.createdFrom) params.set('createdFrom', filters.createdFrom);
  if (filters.createdTo) params.set('createdTo', filters.createdTo);
  if (filters.sort && filters.sort !== DEFAULT_SORT) params.set('sort', filters.sort);
  if (filters.ascending) params.set('order', 'asc');
  if (filters.page > 1) params.set('page', String(filters.page));
  if (filters.pageSize !== DEFAULT_PAGE_SIZE) params.set('pageSize', String(filters.pageSize));
  const text = params.toString();
  return text ? `?${text}` : '';
}

/** `sort=created&order=asc`: the sort of the address; the default (id, newest first) is left out. */
function sortFromSearch(params: URLSearchParams): Pick<WebhookFilters, 'sort' | 'ascending'> {
  const sort = params.get('sort');
  return {
    sort: isSortField(sort) && sort !== DEFAULT_SORT ? sort : undefined,
    ascending: params.get('order') === 'asc' ? true : undefined,
  };
}

/**
 * The filters after a click on a column header: the same column flips its order, another column
 * starts descending (newest, largest first: what an operator looks for). Back to page 1.
 */
export function toggleSort(filters: WebhookFilters, field: WebhookSortField): WebhookFilters {
  const current = filters.sort ?? DEFAULT_SORT;
  const ascending = current === field ? !filters.ascending : false;
  return {
    ...filters,
    sort: field === DEFAULT_SORT ? undefined : field,
    ascending: ascending || undefined,
    page: 1,
  };
}

/** The `aria-sort` of a column header. */
export function ariaSort(
  filters: WebhookFilters,
  field: WebhookSortField,
): 'ascending' | 'descending' | undefined {
  if ((filters.sort ?? DEFAULT_SORT) !== field) return undefined;
  return filters.ascending ? 'ascending' : 'descending';
}

/** The GET /api/webhooks query of filters: newest first unless sorted otherwise. */
export function filtersToApiQuery(
  filters: WebhookFilters,
): Record<string, string | number | boolean | undefined> {
  return {
    q: filters.q,
    state: filters.state,
    registrationId: filters.registrationId,
    entityName: filters.entityName,
    entityId: filters.entityId,
    createdFrom: filters.createdFrom,
    createdTo: filters.createdTo,
    PageNumber: filters.page,
    PageSize: filters.pageSize,
    SortByAttributeName: filters.sort ?? DEFAULT_SORT,
    AscendingOrder: filters.ascending ?? false,
  };
}

/**
 * The bulk action filter (POST /api/webhooks/bulk) selecting what the table's filters show, all
 * pages: the table's one state becomes `states`, `createdTo` (exclusive) `createdBefore`.
 */
export function filtersToBulkFilter(filters: WebhookFilters): WebhookBulkFilter {
  const bulk: WebhookBulkFilter = {};
  if (filters.state !== undefined) bulk.states = [filters.state];
  if (filters.registrationId !== undefined) bulk.registrationId = filters.registrationId;
  if (filters.entityName) bulk.entityName = filters.entityName as WebhookBulkFilter['entityName'];
  if (filters.entityId !== undefined) bulk.entityId = filters.entityId;
  if (filters.createdFrom) bulk.createdFrom = filters.createdFrom;
  if (filters.createdTo) bulk.createdBefore = filters.createdTo;
  return bulk;
}

/** The filters in words, for a confirmation: `state Failed, registration 3, created from …`. */
export function describeFilters(filters: WebhookFilters): string {
  const parts: string[] = [];
  if (filters.q) parts.push(`search “${filters.q}”`);
  if (filters.state !== undefined) parts.push(`state ${webhookStateName(filters.state)}`);
  if (filters.registrationId !== undefined) parts.push(`registration ${filters.registrationId}`);
  if (filters.entityName) parts.push(`entity ${filters.entityName}`);
  if (filters.entityId !== undefined) parts.push(`entity id ${filters.entityId}`);
  if (filters.createdFrom) parts.push(`created from ${formatDateTimeWithZone(filters.createdFrom)}`);
  if (filters.createdTo) parts.push(`created before ${formatDateTimeWithZone(filters.createdTo)}`);
  return parts.length ? parts.join(', ') : 'no filter: every webhook you can see';
}

/** How many filters (not paging) are set. */
export function activeFilterCount(filters: WebhookFilters): number {
  return [
    filters.q,
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
