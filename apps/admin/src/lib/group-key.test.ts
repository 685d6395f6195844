import { describe, expect, it } from 'vitest';
import { groupWebhooksPath, parseGroupKey } from './group-key';

describe('group keys', () => {
  it('reads the entity of a group key', () => {
    expect(parseGroupKey('Property:42')).toEqual({ entityName: 'Property', entityId: 42 });
    expect(parseGroupKey('workorder:7')).toEqual({ entityName: 'WorkOrder', entityId: 7 });
    expect(parseGroupKey('Nonsense:x')).toEqual({ entityName: undefined, entityId: undefined });
    expect(parseGroupKey('nocolon')).toEqual({});
  });

  it('links to the webhooks of a group', () => {
    expect(groupWebhooksPath(3, 'Property:42')).toBe(
      '/webhooks?registrationId=3&entityName=Property&entityId=42',
    );
  });
});
