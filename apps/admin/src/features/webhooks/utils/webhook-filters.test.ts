import { WebhookState } from '@platform/shared';
import { describe, expect, it } from 'vitest';
import {
  activeFilterCount,
  ariaSort,
  describeFilters,
  filtersFromSearch,
  filtersToApiQuery,
  filtersToBulkFilter,
  filtersToSearch,
  ignoredParams,
  timeRangeProblem,
  toggleSort,
} from './webhook-filters';

describe('webhook filters', () => {
  it('keeps a search in the address, sends it as q, and names one the API would refuse', () => {
    const filters = filtersFromSearch(new URLSearchParams('?q=%20Lindenstra%C3%9Fe%20&state=4'));
    expect(filters.q).toBe('Lindenstraße');
    expect(filtersToSearch(filters)).toBe('?q=Lindenstra%C3%9Fe&state=4');
    expect(filtersToApiQuery(filters).q).toBe('Lindenstraße');
    expect(describeFilters(filters)).toBe('search “Lindenstraße”, state Failed');
    expect(activeFilterCount(filters)).toBe(2);
    // an id of any length is a search; text needs three characters
    expect(filtersFromSearch(new URLSearchParams('?q=7')).q).toBe('7');
    expect(ignoredParams(new URLSearchParams('?q=ab'))).toEqual([
      'q "ab" (a search is an id, or 3 to 200 characters of payload text)',
    ]);
    // a bulk filter cannot carry a search: the page does not offer "all matching" for one
    expect(filtersToBulkFilter(filters)).toEqual({ states: [4] });
  });

  it('names every parameter of a bad link it had to ignore, and none of a good one', () => {
    const bad = (search: string) => ignoredParams(new URLSearchParams(search));
    expect(bad('?state=99')).toEqual(['state "99" (not a state: 1 Created … 7 Resolved)']);
    expect(bad('?state=abc&createdFrom=notadate&entityId=abc&sort=bogus')).toEqual([
      'state "abc" (not a state: 1 Created … 7 Resolved)',
      'entityId "abc" (not an entity id)',
      'createdFrom "notadate" (not a date and time)',
      expect.stringMatching(/^sort "bogus" \(not a column to sort by: /),
    ]);
    expect(bad('?page=0&pageSize=7&order=up')).toEqual([
      'order "up" (asc or desc)',
      'page "0" (not a page number)',
      'pageSize "7" (one of 20, 50, 100)',
    ]);
    expect(
      bad(
        `?state=${WebhookState.Failed}&registrationId=3&entityName=Property&sort=created&order=asc&page=2&pageSize=50`,
      ),
    ).toEqual([]);
    expect(bad('?state=&page=')).toEqual([]);
  });

  it('reads the filters from the address and writes them back', () => {
    const search = `?state=${WebhookState.Failed}&registrationId=3&entityName=Property&entityId=42&createdFrom=2026-11-22T10%3A00%3A00.000Z&page=2&pageSize=50`;
    const filters = filtersFromSearch(new URLSearchParams(search));
    expect(filters).toEqual({
      state: WebhookState.Failed,
      registrationId: 3,
      entityName: 'Property',
      entityId: 42,
      createdFrom: '2026-11-22T10:00:00.000Z',
      createdTo: undefined,
      page: 2,
      pageSize: 50,
    });
    expect(filtersToSearch(filters)).toBe(search);
    expect(activeFilterCount(filters)).toBe(5);
  });

  it('drops values the API would refuse, and defaults the paging', () => {
    const filters = filtersFromSearch(
      new URLSearchParams(
        'state=9&registrationId=-1&entityName=Tenant&entityId=1.5&createdTo=yesterday&page=0&pageSize=7',
      ),
    );
    expect(filters).toEqual({ page: 1, pageSize: 20 });
    expect(filtersToSearch(filters)).toBe('');
    expect(filtersFromSearch(new URLSearchParams('entityName=workorder')).entityName).toBe('WorkOrder');
  });

  it('asks the API for the newest first', () => {
    expect(filtersToApiQuery({ state: WebhookState.Retrying, page: 3, pageSize: 100 })).toMatchObject({
      state: WebhookState.Retrying,
      PageNumber: 3,
      PageSize: 100,
      SortByAttributeName: 'id',
      AscendingOrder: false,
    });
  });

  it('refuses a time range that ends before it starts', () => {
    expect(
      timeRangeProblem({ createdFrom: '2026-11-22T10:00:00Z', createdTo: '2026-11-22T09:00:00Z' }),
    ).toBeDefined();
    expect(
      timeRangeProblem({ createdFrom: '2026-11-22T10:00:00Z', createdTo: '2026-11-22T10:00:00Z' }),
    ).toBeUndefined();
    expect(timeRangeProblem({ createdFrom: '2026-11-22T10:00:00Z' })).toBeUndefined();
  });

  it('keeps the sort in the address and asks the API for it', () => {
    const filters = filtersFromSearch(new URLSearchParams('sort=nextAttemptAt&order=asc&page=3'));
    expect(filters).toMatchObject({ sort: 'nextAttemptAt', ascending: true, page: 3 });
    expect(filtersToSearch(filters)).toBe('?sort=nextAttemptAt&order=asc&page=3');
    expect(filtersToApiQuery(filters)).toMatchObject({
      SortByAttributeName: 'nextAttemptAt',
      AscendingOrder: true,
    });
    // a field the API does not sort by is dropped
    expect(filtersFromSearch(new URLSearchParams('sort=targetUrl')).sort).toBeUndefined();
    expect(activeFilterCount(filters)).toBe(0);
  });

  it('sorts by a clicked column, descending first, flipping on a second click, from page 1', () => {
    const start = filtersFromSearch(new URLSearchParams('page=4'));
    expect(ariaSort(start, 'id')).toBe('descending');
    const byCreated = toggleSort(start, 'created');
    expect(byCreated).toMatchObject({ sort: 'created', page: 1 });
    expect(byCreated.ascending).toBeUndefined();
    expect(ariaSort(byCreated, 'created')).toBe('descending');
    expect(ariaSort(byCreated, 'id')).toBeUndefined();
    const flipped = toggleSort(byCreated, 'created');
    expect(ariaSort(flipped, 'created')).toBe('ascending');
    expect(filtersToSearch(flipped)).toBe('?sort=created&order=asc');
    expect(filtersToSearch(toggleSort(flipped, 'id'))).toBe('');
  });

  it('turns the table filters into the bulk action filter, all pages', () => {
    const filters = filtersFromSearch(
      new URLSearchParams(
        `state=${WebhookState.Failed}&registrationId=3&entityName=Property&entityId=42&createdFrom=2026-11-22T10:00:00Z&createdTo=2026-11-23T10:00:00Z&page=2&sort=created`,
      ),
    );
    expect(filtersToBulkFilter(filters)).toEqual({
      states: [WebhookState.Failed],
      registrationId: 3,
      entityName: 'Property',
      entityId: 42,
      createdFrom: '2026-11-22T10:00:00.000Z',
      createdBefore: '2026-11-23T10:00:00.000Z',
    });
    expect(filtersToBulkFilter({ page: 1, pageSize: 20 })).toEqual({});
    expect(describeFilters({ page: 1, pageSize: 20 })).toMatch(/every webhook/);
    expect(describeFilters({ state: WebhookState.Failed, registrationId: 3, page: 1, pageSize: 20 })).toBe(
      'state Failed, registration 3',
    );
  });
});
