import { OPERATOR_ACTION_NAMES } from '@platform/shared';
import { describe, expect, it } from 'vitest';
import {
  operatorActionApiQuery,
  operatorActionFieldsOf,
  operatorActionQueryFromSearch,
  operatorActionQueryOfFields,
  operatorActionQueryToSearch,
  changedLabel,
  describeActionFilter,
  describeDetail,
  OPERATOR_ACTION_LABELS,
} from './operator-actions';

describe('audit page', () => {
  it('names every action the API records', () => {
    for (const action of OPERATOR_ACTION_NAMES) expect(OPERATOR_ACTION_LABELS[action]).toBeTruthy();
  });

  it('keeps its filters in the address, dropping what the API would refuse', () => {
    const query = operatorActionQueryFromSearch(
      new URLSearchParams('action=registration.recover&registrationId=3&accountId=2&page=2'),
    );
    expect(query).toEqual({ action: 'registration.recover', registrationId: 3, accountId: 2, page: 2 });
    expect(operatorActionQueryToSearch(query)).toBe(
      '?action=registration.recover&registrationId=3&accountId=2&page=2',
    );
    expect(
      operatorActionQueryFromSearch(new URLSearchParams('action=drop.tables&registrationId=-1&page=x')),
    ).toEqual({
      action: undefined,
      registrationId: undefined,
      accountId: undefined,
      page: 1,
    });
    expect(operatorActionApiQuery(query)).toMatchObject({
      action: 'registration.recover',
      PageNumber: 2,
      PageSize: 20,
    });
  });

  it('reads its form back to page 1, saying what is wrong', () => {
    const fields = operatorActionFieldsOf({ action: 'webhooks.bulk-retry', registrationId: 4, page: 3 });
    expect(fields).toEqual({ action: 'webhooks.bulk-retry', registrationId: '4', accountId: '' });
    expect(operatorActionQueryOfFields(fields).query).toEqual({
      action: 'webhooks.bulk-retry',
      registrationId: 4,
      accountId: undefined,
      page: 1,
    });
    expect(
      operatorActionQueryOfFields({ action: '', registrationId: 'abc', accountId: '0' }).problems,
    ).toEqual({
      registrationId: expect.stringMatching(/whole number/),
      accountId: expect.stringMatching(/whole number/),
    });
  });

  it('says a filter or a window in words, with times in the zone asked for', () => {
    expect(
      describeActionFilter(
        {
          registrationId: 3,
          states: [4],
          errorKind: 'status',
          statusCode: 500,
          createdFrom: '2026-11-26T10:00:00Z',
          custom: { a: 1 },
        },
        'UTC',
      ),
    ).toBe(
      'registration 3 · state Failed · error status · HTTP 500 · created from 2026-11-26 10:00:00 UTC · custom {"a":1}',
    );
    // in one order, whatever order the API stored them in
    expect(
      describeActionFilter(
        { since: '2026-11-26T10:00:00Z', other: 1, states: [2, 4], registrationId: 3 },
        'UTC',
      ),
    ).toBe('registration 3 · states Retrying, Failed · since 2026-11-26 10:00:00 UTC · other 1');
    expect(describeActionFilter(null)).toBe('');
    // a bulk action on an empty filter acted on every webhook the caller sees
    expect(describeActionFilter({})).toBe('all webhooks (no filter)');
    expect(describeActionFilter({ registrationId: null })).toBe('all webhooks (no filter)');
  });

  it('says how many changed, and that an operation is still running', () => {
    expect(changedLabel({ changed: 12, dryRun: false, operationId: 1 })).toBe('12');
    expect(changedLabel({ changed: 12, dryRun: true, operationId: 1 })).toBe('would change 12');
    expect(changedLabel({ changed: null, dryRun: false, operationId: 1 })).toBe('Running…');
    expect(changedLabel({ changed: null, dryRun: false, operationId: null })).toBe('—');
    expect(describeDetail({ overlap: '24h', statusCode: 200, none: null })).toBe(
      'overlap 24h · statusCode 200',
    );
  });
});
