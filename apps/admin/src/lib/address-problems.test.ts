import { describe, expect, it } from 'vitest';
import { unreadParams } from './address-problems';

describe('unreadParams', () => {
  const rules = { registrationId: 'not a registration id', page: 'not a page number' };

  it('names each parameter given but not read as given', () => {
    expect(unreadParams(new URLSearchParams('registrationId=abc&page=0'), { page: 1 }, rules)).toEqual([
      'registrationId "abc" (not a registration id)',
      'page "0" (not a page number)',
    ]);
  });

  it('says nothing of what it read, of empty values, or of parameters it does not know', () => {
    expect(
      unreadParams(
        new URLSearchParams('registrationId=7&page=&other=x'),
        { registrationId: 7, page: 1 },
        rules,
      ),
    ).toEqual([]);
  });
});
