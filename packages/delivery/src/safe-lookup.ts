import { lookup as dnsLookup, type LookupAddress } from 'node:dns';
import type { LookupFunction } from 'node:net';
import { isPublicAddress } from '@platform/shared';

/** The error a refused address fails the connection with; the dispatcher reports it as `private-address`. */
export class PrivateAddressError extends Error {
  readonly code = 'EPRIVATEADDRESS';
  constructor(readonly address: string) {
    super(`refused to connect to the private address ${address}`);
  }
}

type LookupCallback = (
  error: NodeJS.ErrnoException | null,
  address: string | LookupAddress[],
  family?: number,
) => void;

/**
 * Wraps `resolve` (a `dns.lookup`) into a lookup for outgoing connections that refuses private
 * addresses: every resolved address is checked at connect time, which also defeats DNS rebinding
 * (a name that resolved to a public address at registration and to 127.0.0.1 now). One private
 * address among several refuses the name, since the connection may try any of them.
 */
export function createSafeLookup(resolve: LookupFunction = dnsLookup): LookupFunction {
  return (hostname, options, callback: LookupCallback) => {
    resolve(hostname, { ...options, all: true }, (error, addresses) => {
      if (error) return callback(error, '');
      const list = addresses as LookupAddress[];
      if (list.length === 0) {
        return callback(Object.assign(new Error(`${hostname} has no address`), { code: 'ENOTFOUND' }), '');
      }
      // an answer that is not an IP address at all is refused too: nothing vouches for it
      const refused = list.find((entry) => !isPublicAddress(entry.address));
      if (refused) return callback(new PrivateAddressError(refused.address) as NodeJS.ErrnoException, '');
      if (options.all) return callback(null, list);
      const first = list[0]!;
      callback(null, first.address, first.family);
    });
  };
}
