import { describe, expect, it } from 'vitest';
import { blockedGroupsQueryFromSearch, blockedGroupsQueryToSearch } from './groups-address';

describe("the blocked groups' address", () => {
  it('reads the registration and the page, dropping what the API would refuse', () => {
    expect(blockedGroupsQueryFromSearch(new URLSearchParams('registrationId=7&page=2'))).toEqual({
      registrationId: 7,
      page: 2,
    });
    expect(blockedGroupsQueryFromSearch(new URLSearchParams('registrationId=abc&page=0'))).toEqual({
      registrationId: undefined,
      page: 1,
    });
  });

  it('writes only what differs from the defaults', () => {
    expect(blockedGroupsQueryToSearch({ page: 1 })).toBe('');
    expect(blockedGroupsQueryToSearch({ registrationId: 7, page: 3 })).toBe('?registrationId=7&page=3');
  });
});
