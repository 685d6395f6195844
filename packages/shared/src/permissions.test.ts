import { describe, expect, it } from 'vitest';
import {
  decodePermissions,
  encodePermissions,
  PERMISSION_RESOURCES,
  PERMISSIONS,
  PermissionAction,
  permissionByName,
} from './permissions';

describe('the permission catalog', () => {
  it('gives every permission a distinct id, densely from 0', () => {
    const ids = PERMISSIONS.map((p) => p.id);
    expect(new Set(ids).size).toBe(PERMISSIONS.length);
    expect(ids).toEqual([...PERMISSIONS.keys()]);
    expect(new Set(PERMISSIONS.map((p) => p.name)).size).toBe(PERMISSIONS.length);
    expect(PERMISSIONS).toHaveLength(PERMISSION_RESOURCES.length * 4);
  });

  it('keeps ids stable: they are bits of tokens already issued (append-only)', () => {
    const first = Object.fromEntries(PERMISSIONS.slice(0, 10).map((p) => [p.name, p.id]));
    expect(first).toEqual({
      'Account.Create': 0,
      'Account.Read': 1,
      'Account.Update': 2,
      'Account.Delete': 3,
      'AccountContactDetails.Create': 4,
      'AccountContactDetails.Read': 5,
      'AccountContactDetails.Update': 6,
      'AccountContactDetails.Delete': 7,
      'Party.Create': 8,
      'Party.Read': 9,
    });
    expect(permissionByName('WebhookRegistration.Read').id).toBe(65);
    expect(permissionByName('Webhook.Delete').id).toBe(71);
  });

  it('derives the action of each permission from its name (Create 0, Read 1, Update 2, Delete 3)', () => {
    for (const p of PERMISSIONS) {
      const [resource, action] = p.name.split('.') as [string, keyof typeof PermissionAction];
      expect(p.resource).toBe(resource);
      expect(p.action).toBe(PermissionAction[action]);
      expect(permissionByName(p.name)).toBe(p);
    }
  });

  it('refuses a name outside the catalog', () => {
    expect(() => permissionByName('Nothing.Read' as never)).toThrow(/unknown permission/);
  });
});

describe('the permissions claim', () => {
  it('round-trips any set of ids', () => {
    const all = PERMISSIONS.map((p) => p.id);
    const samples = [[], [0], [7, 8], [all.length - 1], all, all.filter((id) => id % 3 === 0)];
    let seed = 42;
    for (let i = 0; i < 50; i++) {
      samples.push(
        all.filter(() => {
          seed = (seed * 1_103_515_245 + 12_345) % 2 ** 31;
          return seed % 2 === 0;
        }),
      );
    }
    for (const ids of samples) {
      const claim = encodePermissions(ids);
      expect(claim).toMatch(/^[A-Za-z0-9_-]+$/);
      expect(decodePermissions(claim)).toEqual(new Set(ids));
    }
  });

  it('has a stable wire format: bit id % 8 of byte id / 8, unpadded base64url', () => {
    expect(encodePermissions([])).toBe('AAAAAAAAAAAA');
    expect(encodePermissions([0])).toBe('AQAAAAAAAAAA');
    expect(encodePermissions([1, 8])).toBe('AgEAAAAAAAAA');
    expect(encodePermissions(PERMISSIONS.map((p) => p.id))).toBe('____________');
    expect(decodePermissions('AgE')).toEqual(new Set([1, 8]));
  });

  it('leaves ids outside the catalog out', () => {
    expect(decodePermissions(encodePermissions([-1, 1.5, PERMISSIONS.length, 1000, 3]))).toEqual(
      new Set([3]),
    );
    // bits past the catalog (a longer claim) are not permissions
    expect(decodePermissions('AAAAAAAAAAAA__8')).toEqual(new Set());
  });

  it.each([
    '',
    'A',
    'AAAAA',
    '!!!!',
    'not base64!',
    '////',
    '++++',
    '_w==',
    '/w',
    ' __8',
    '__8\n',
    '%FF%FF',
    '____.____',
  ])('decodes garbage %j to no permissions', (claim) => {
    expect(decodePermissions(claim)).toEqual(new Set());
  });
});
