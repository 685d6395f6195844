import { BlockList, isIP } from 'node:net';

/**
 * Address ranges a webhook must not reach where private targets are not allowed: "this" network,
 * private (RFC 1918, unique local), shared (carrier-grade NAT), loopback, link-local (which holds
 * cloud metadata endpoints), multicast and reserved ranges. IPv4-mapped IPv6 addresses are
 * checked against the IPv4 ranges too.
 */
const PRIVATE_RANGES = new BlockList();
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
  ['224.0.0.0', 4],
  ['240.0.0.0', 4],
] as const) {
  PRIVATE_RANGES.addSubnet(network, prefix, 'ipv4');
}
for (const [network, prefix] of [
  ['::', 128],
  ['::1', 128],
  ['64:ff9b::', 96],
  ['fc00::', 7],
  ['fe80::', 10],
  ['ff00::', 8],
] as const) {
  PRIVATE_RANGES.addSubnet(network, prefix, 'ipv6');
}

/** Whether the IP address `address` lies in a private, loopback, link-local or reserved range. */
export function isPrivateAddress(address: string): boolean {
  const family = isIP(address);
  if (family === 4) return PRIVATE_RANGES.check(address, 'ipv4');
  if (family === 6) return PRIVATE_RANGES.check(address, 'ipv6');
  return false;
}

/**
 * Why the host of `url` may not be a webhook target where private targets are not allowed: a
 * literal private address or `localhost` (and its subdomains, RFC 6761). Names that merely
 * resolve to such addresses are the dispatcher's to refuse, at connect time (design part 4).
 */
export function privateTargetProblem(url: string): string | undefined {
  const host = new URL(url).hostname
    .replace(/^\[|\]$/g, '')
    .replace(/\.$/, '')
    .toLowerCase();
  if (host === 'localhost' || host.endsWith('.localhost')) {
    return 'must not point at localhost: private targets are not allowed here';
  }
  if (isPrivateAddress(host)) {
    return `must not point at the private, loopback or link-local address ${host}: private targets are not allowed here`;
  }
  return undefined;
}
