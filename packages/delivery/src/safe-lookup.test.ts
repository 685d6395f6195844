import type { LookupAddress } from 'node:dns';
import type { LookupFunction } from 'node:net';
import { describe, expect, it } from 'vitest';
import { createSafeLookup, PrivateAddressError } from './safe-lookup';

/** What the safe lookup answers for a name the resolver answers with `addresses`. */
function safelyResolve(
  addresses: string[],
  all = true,
): Promise<{ error: NodeJS.ErrnoException | null; address: string | LookupAddress[]; family?: number }> {
  const resolve: LookupFunction = (_hostname, _options, callback) =>
    callback(
      null,
      addresses.map((address) => ({ address, family: address.includes(':') ? 6 : 4 })),
    );
  return new Promise((done) =>
    createSafeLookup(resolve)('target.example.test', { all }, (error, address, family) =>
      done({ error, address, family }),
    ),
  );
}

describe('createSafeLookup', () => {
  it('passes public addresses through, all of them or the first', async () => {
    const list = [
      { address: '8.8.8.8', family: 4 },
      { address: '2001:4860::8888', family: 6 },
    ];
    expect(await safelyResolve(['8.8.8.8', '2001:4860::8888'])).toEqual({
      error: null,
      address: list,
      family: undefined,
    });
    expect(await safelyResolve(['2001:4860::8888', '8.8.8.8'], false)).toEqual({
      error: null,
      address: '2001:4860::8888',
      family: 6,
    });
  });

  it('refuses the name when any address is private, or not an address at all', async () => {
    for (const [addresses, refused] of [
      [['127.0.0.1'], '127.0.0.1'],
      [['8.8.8.8', '169.254.169.254'], '169.254.169.254'],
      [['2001:4860::8888', 'fe80::1%eth0'], 'fe80::1%eth0'],
      [['64:ff9b::a9fe:a9fe'], '64:ff9b::a9fe:a9fe'],
      [['not-an-address'], 'not-an-address'],
    ] as const) {
      const { error } = await safelyResolve([...addresses]);
      expect(error, refused).toBeInstanceOf(PrivateAddressError);
      expect((error as PrivateAddressError).address).toBe(refused);
    }
  });

  it('answers ENOTFOUND for a name without addresses', async () => {
    expect((await safelyResolve([])).error?.code).toBe('ENOTFOUND');
  });
});
