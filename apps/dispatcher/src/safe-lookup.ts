import { lookup as dnsLookup, type LookupAddress } from 'node:dns';
import { BlockList, isIP, type LookupFunction } from 'node:net';

// Loopback, private, link-local (cloud metadata lives at 169.254.169.254), CGNAT, unspecified,
// multicast and reserved ranges, IPv4 and IPv6 (including IPv4-mapped IPv6).
const BLOCKED = new BlockList();
for (const [network, prefix] of [
  ['0.0.0.0', 8],
  ['10.0.0.0', 8],
  ['100.64.0.0', 10],
  ['127.0.0.0', 8],
  ['169.254.0.0', 16],
  ['172.16.0.0', 12],
  ['192.0.0.0', 24],
  ['192.168.0.0', 16],
  ['198.18.0.0', 15],
  ['224.0.0.0', 3],
] as const) {
  BLOCKED.addSubnet(network, prefix, 'ipv4');
}
for (const [network, prefix] of [
  ['::', 128],
  ['::1', 128],
  ['fc00::', 7],
  ['fe80::', 10],
  ['ff00::', 8],
] as const) {
  BLOCKED.addSubnet(network, prefix, 'ipv6');
}

/** Whether `address` is loopback, private, link-local or otherwise not a public internet address. */
export function isPrivateAddress(address: string): boolean {
  const family = isIP(address);
  if (family === 4) return BLOCKED.check(address, 'ipv4');
  if (family === 6) {
    const mapped = /^::ffff:(\d+\.\d+\.\d+\.\d+)$/i.exec(address);
    return mapped ? BLOCKED.check(mapped[1]!, 'ipv4') : BLOCKED.check(address, 'ipv6');
  }
  return true;
}

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
      const refused = list.find((entry) => isPrivateAddress(entry.address));
      if (refused) return callback(new PrivateAddressError(refused.address) as NodeJS.ErrnoException, '');
      if (options.all) return callback(null, list);
      const first = list[0]!;
      callback(null, first.address, first.family);
    });
  };
}
