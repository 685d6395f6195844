import { WebhookTestRequest } from '@platform/shared';
import { describe, expect, it } from 'vitest';
import { testEventOptions, testEventRequest, testEventSucceeded } from './test-event';

describe('test event', () => {
  it('offers the default and each subscribed event', () => {
    const options = testEventOptions([
      { entityName: 'Property', type: 1 },
      { entityName: 'Unit', type: 3 },
    ]);
    expect(options.map((option) => option.label)).toEqual([
      'First subscribed event (default)',
      'Property Created',
      'Unit Deleted',
    ]);
    expect(options.map((option) => testEventRequest(option.value))).toEqual([
      {},
      { entityName: 'Property', type: 1 },
      { entityName: 'Unit', type: 3 },
    ]);
    for (const option of options) {
      expect(WebhookTestRequest.safeParse(testEventRequest(option.value)).success).toBe(true);
    }
  });

  it('counts only a 2xx without an error as accepted', () => {
    const result = { durationMs: 12, responseExcerpt: null };
    expect(testEventSucceeded({ ...result, statusCode: 204, errorKind: null })).toBe(true);
    expect(testEventSucceeded({ ...result, statusCode: 500, errorKind: 'status' })).toBe(false);
    expect(testEventSucceeded({ ...result, statusCode: null, errorKind: 'timeout' })).toBe(false);
  });
});
