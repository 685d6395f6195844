import { WebhookState } from '@platform/shared';
import { describe, expect, it } from 'vitest';
import {
  activeFilterCount,
  filtersFromSearch,
  filtersToApiQuery,
  filtersToSearch,
  timeRangeProblem,
} from './webhook-filters';

describe('webhook filters', () => {
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
});
