import { WebhookState } from '@platform/shared';
import { describe, expect, it } from 'vitest';
import {
  lineActionAvailability,
  lineName,
  lineProblem,
  lineWebhooksPath,
  webhookIssueQueryFromSearch,
  webhookIssueQueryToSearch,
} from './webhook-issues';

describe('triage', () => {
  it('keeps the registration and the page in the address', () => {
    const query = webhookIssueQueryFromSearch(new URLSearchParams('registrationId=3&page=2&pageSize=50'));
    expect(query).toEqual({ registrationId: 3, page: 2, pageSize: 50 });
    expect(webhookIssueQueryToSearch(query)).toBe('?registrationId=3&page=2&pageSize=50');
    expect(
      webhookIssueQueryToSearch(
        webhookIssueQueryFromSearch(new URLSearchParams('registrationId=x&pageSize=7')),
      ),
    ).toBe('');
  });

  it('offers retry for Failed lines only, abort and resolve for both', () => {
    const failed = { state: WebhookState.Failed };
    const retrying = { state: WebhookState.Retrying };
    expect(
      ['retry', 'abort', 'resolve'].map((a) => lineActionAvailability(a as 'retry', failed).allowed),
    ).toEqual([true, true, true]);
    expect(lineActionAvailability('retry', retrying)).toEqual({
      allowed: false,
      reason: expect.stringMatching(/Only Failed webhooks can be retried; these are Retrying/),
    });
    expect(lineActionAvailability('abort', retrying).allowed).toBe(true);
    expect(lineActionAvailability('resolve', retrying).allowed).toBe(true);
  });

  it('says what went wrong in a phrase', () => {
    expect(lineProblem({ errorKind: 'status', lastStatusCode: 500 })).toBe('HTTP 500');
    expect(lineProblem({ errorKind: 'timeout', lastStatusCode: null })).toBe('timeout');
    expect(lineProblem({ errorKind: 'circuit-open', lastStatusCode: 503 })).toBe('circuit-open (HTTP 503)');
    expect(lineProblem({ errorKind: null, lastStatusCode: null })).toBe('No attempt recorded');
    expect(lineName({ registrationId: 3, state: 4, errorKind: 'status', lastStatusCode: 502 })).toBe(
      'registration 3, Failed, HTTP 502',
    );
  });

  it('links to the webhooks table filtered by registration and state', () => {
    expect(lineWebhooksPath({ registrationId: 3, state: 4 })).toBe('/webhooks?registrationId=3&state=4');
  });
});
