import type { WebhookRead } from '@platform/shared';
import { describe, expect, it } from 'vitest';
import { csvField, webhooksCsv } from './webhooks-csv';

const webhook = (overrides: Partial<WebhookRead> = {}): WebhookRead =>
  ({
    id: 7,
    registrationId: 2,
    targetUrl: 'https://hooks.example.com/in?a=1,2',
    entityName: 'Property',
    eventType: 1,
    entityId: 42,
    groupKey: 'Property:42',
    state: 4,
    attemptCount: 7,
    lastAttemptAt: '2026-11-27T10:00:00.000Z',
    lastStatusCode: 500,
    lastErrorKind: 'status',
    nextAttemptAt: null,
    created: '2026-11-27T09:59:00.000Z',
    ...overrides,
  }) as WebhookRead;

describe('the webhooks CSV', () => {
  it('quotes what needs quoting and disarms formulas', () => {
    expect(csvField('plain')).toBe('plain');
    expect(csvField('a,b')).toBe('"a,b"');
    expect(csvField('say "hi"')).toBe('"say ""hi"""');
    expect(csvField('line\nbreak')).toBe('"line\nbreak"');
    expect(csvField('=HYPERLINK("x")')).toBe(`"'=HYPERLINK(""x"")"`);
    expect(csvField(-1)).toBe('-1');
    expect(csvField(null)).toBe('');
  });

  it('has a header and a line per webhook, states and events by name', () => {
    expect(webhooksCsv([webhook()]).split('\r\n')).toEqual([
      'id,state,registration_id,target_url,entity_name,event,entity_id,group_key,attempts,last_attempt_at,last_status,last_error,next_attempt_at,created',
      '7,Failed,2,"https://hooks.example.com/in?a=1,2",Property,Created,42,Property:42,7,2026-11-27T10:00:00.000Z,500,status,,2026-11-27T09:59:00.000Z',
      '',
    ]);
  });
});
