import { describe, expect, it } from 'vitest';
import { decodeAccessToken, operatorRefusal } from './jwt';
import { fakeAccessToken } from '../../tests/support/tokens';

describe('access token claims', () => {
  it('reads the claims of docs/api.md#access-tokens and the permission bitset', () => {
    // bit 0 (Account.Create) and bit 9 (Party.Read)
    const claims = decodeAccessToken(fakeAccessToken({ permissions: 'AQI', partyName: 'Grüne Höfe' }));
    expect(claims).toMatchObject({
      accountId: 7,
      partyId: 2,
      partyType: 2,
      scope: 'platform',
      partyName: 'Grüne Höfe',
    });
    expect([...claims!.permissions]).toEqual([0, 9]);
    expect(claims!.expiresAt % 1000).toBe(0);
  });

  it('answers undefined for anything but a JWT with those claims', () => {
    expect(decodeAccessToken('abc')).toBeUndefined();
    expect(decodeAccessToken('a.b.c')).toBeUndefined();
    expect(decodeAccessToken(fakeAccessToken({ exp: undefined }))).toBeUndefined();
  });

  it('lets Admin and Property Management Company accounts in, with the platform scope only', () => {
    const refusal = (overrides: Record<string, unknown>) =>
      operatorRefusal(decodeAccessToken(fakeAccessToken(overrides))!);
    expect(refusal({ accountRole: '1' })).toBeUndefined();
    expect(refusal({ accountRole: '2' })).toBeUndefined();
    for (const role of ['3', '5', '7', '13', '14'])
      expect(refusal({ accountRole: role })).toMatch(/for operators/);
    expect(refusal({ scope: 'webhook' })).toMatch(/cannot be used/);
  });
});
