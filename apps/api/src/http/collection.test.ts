import { describe, expect, it } from 'vitest';
import { isIsoTimestamp, searchBody, type CollectionSpec } from './collection';
import { parseInput } from './validate';

describe('isIsoTimestamp', () => {
  it.each([
    '2025-01-01',
    '2025-01-01T00:00',
    '2025-01-01T12:34:56',
    '2025-01-01T12:34:56Z',
    '2025-01-01T12:34:56.123Z',
    '2025-01-01T12:34:56.123456789+02:00',
    '2025-01-01T12:34:56-0530',
    '2024-02-29',
    '2000-02-29',
    '0001-01-01',
    '9999-12-31T23:59:59Z',
  ])('takes %s', (text) => {
    expect(isIsoTimestamp(text)).toBe(true);
  });

  it.each([
    ['a bare number', '1'],
    ['a year alone', '2025'],
    ['a word', 'yesterday'],
    ['an RFC 2822 date', 'Wed, 01 Jan 2025 00:00:00 GMT'],
    ['February 30th', '2025-02-30'],
    ['February 29th of a common year', '2025-02-29'],
    ['February 29th of 1900', '1900-02-29'],
    ['month 13', '2025-13-01'],
    ['month 0', '2025-00-10'],
    ['day 0', '2025-01-00'],
    ['day 32', '2025-01-32'],
    ['hour 24', '2025-01-01T24:00:00Z'],
    ['minute 60', '2025-01-01T10:60:00Z'],
    ['second 60', '2025-01-01T10:00:60Z'],
    ['an offset of 16 hours', '2025-01-01T10:00:00+16:00'],
    ['year 0', '0000-01-01'],
    ['a six-digit year', '+275760-09-13T00:00:00Z'],
    ['a space for T', '2025-01-01 10:00:00'],
    ['a lower-case z', '2025-01-01T10:00:00z'],
    ['ten fraction digits', '2025-01-01T10:00:00.1234567890Z'],
    ['trailing text', '2025-01-01T10:00:00Z; drop table accounts'],
    ['an empty string', ''],
  ])('refuses %s', (_label, text) => {
    expect(isIsoTimestamp(text)).toBe(false);
  });
});

describe('searchBody', () => {
  const spec: CollectionSpec = {
    fields: { id: { column: 't.id', type: 'integer' }, 'address.city': { column: 't.city', type: 'string' } },
    sortable: ['id'],
    searchable: ['address.city'],
    tieBreaker: 't.id',
  };
  const Body = searchBody(spec);

  it('defaults to no filters and no sort, ascending keys, and canonical names', () => {
    expect(parseInput(Body, {}, 'body')).toEqual({ filters: [], sort: [] });
    expect(
      parseInput(
        Body,
        {
          Filters: [{ Attribute: 'ADDRESS.CITY', Operator: 'STARTSWITH', Value: 'Ber' }],
          sort: [{ attribute: 'ID' }],
        },
        'body',
      ),
    ).toEqual({
      filters: [{ attribute: 'address.city', operator: 'startsWith', value: 'Ber' }],
      sort: [{ attribute: 'id', ascending: true }],
    });
  });

  it('limits filters to the searchable attributes and sorting to the sortable ones', () => {
    expect(Body.safeParse({ filters: [{ attribute: 'id', operator: 'eq', value: 1 }] }).success).toBe(false);
    expect(Body.safeParse({ sort: [{ attribute: 'address.city' }] }).success).toBe(false);
  });
});
