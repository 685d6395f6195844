/**
 * Which hosts a webhook may not reach where private targets are not allowed (design part 4): the
 * one home of that rule, read by the API at registration and by the dispatcher at connect time.
 *
 * Written without Node's `net`, so the contract stays isomorphic: `net.isIP` knows none of the
 * IPv4 spellings `inet_aton` and the WHATWG URL parser accept (`2130706433`, `0x7f.1`), and
 * `net.BlockList` misses IPv6 addresses with a zone id (`fe80::1%eth0`).
 */

/**
 * What a host is, for reaching it from a server: `public` for an IP address in no range below,
 * `not-an-ip` for a name (only resolving it tells where it leads), `localhost` for the names that
 * always lead to this machine (RFC 6761), else the range an IP address lies in.
 */
export type HostKind =
  | 'public'
  | 'not-an-ip'
  | 'localhost'
  | 'unspecified'
  | 'loopback'
  | 'private'
  | 'carrier-grade-nat'
  | 'link-local'
  | 'unique-local'
  | 'multicast'
  | 'benchmarking'
  | 'reserved';

type Range = readonly [network: string, prefix: number, kind: HostKind];

// "this network" (0.0.0.0 reaches the local host on Linux), RFC 1918, RFC 6598 shared space,
// link-local (cloud metadata lives at 169.254.169.254), IETF protocol assignments, RFC 2544
// benchmarking, multicast, and the reserved rest up to the broadcast address
const IPV4_RANGES: readonly Range[] = [
  ['0.0.0.0', 8, 'unspecified'],
  ['10.0.0.0', 8, 'private'],
  ['100.64.0.0', 10, 'carrier-grade-nat'],
  ['127.0.0.0', 8, 'loopback'],
  ['169.254.0.0', 16, 'link-local'],
  ['172.16.0.0', 12, 'private'],
  ['192.0.0.0', 24, 'reserved'],
  ['192.168.0.0', 16, 'private'],
  ['198.18.0.0', 15, 'benchmarking'],
  ['224.0.0.0', 4, 'multicast'],
  ['240.0.0.0', 4, 'reserved'],
];

// Only 2000::/3 is allocated as global unicast; everything outside it that no row names (site-local
// fec0::/10, IPv4-compatible ::/96, discard 100::/64, NAT64's local-use 64:ff9b:1::/48) is
// reserved. Inside it, 2001::/23 is the IETF protocol assignments block (Teredo among them), like
// 192.0.0.0/24; the more specific row comes first.
const IPV6_RANGES: readonly Range[] = [
  ['::', 128, 'unspecified'],
  ['::1', 128, 'loopback'],
  ['fc00::', 7, 'unique-local'],
  ['fe80::', 10, 'link-local'],
  ['ff00::', 8, 'multicast'],
  ['2001:2::', 48, 'benchmarking'],
  ['2001::', 23, 'reserved'],
];
const GLOBAL_UNICAST = ipv6Network('2000::', 3);

// IPv6 addresses that stand for an IPv4 address, judged by that address: a connection to them
// reaches it (IPv4-mapped, on a dual-stack socket) or is sent towards it by a translator or relay
// (NAT64's well-known prefix, 6to4). `shift` is where the IPv4 address sits, in bits from the right.
const IPV4_EMBEDDING: readonly { network: bigint; prefix: number; shift: bigint }[] = [
  { ...ipv6Network('::ffff:0:0', 96), shift: 0n },
  { ...ipv6Network('64:ff9b::', 96), shift: 0n },
  { ...ipv6Network('2002::', 16), shift: 80n },
];

/** What `host` is: an IP address in any spelling (brackets and a zone id allowed), or a name. */
export function hostKind(host: string): HostKind {
  const bare = host.toLowerCase().replace(/^\[(.*)\]$/, '$1');
  if (bare.includes(':')) {
    const address = parseIPv6(bare.replace(/%.*$/, ''));
    return address === undefined ? 'not-an-ip' : ipv6Kind(address);
  }
  const address = parseIPv4(bare);
  if (address !== undefined) return ipv4Kind(address);
  const name = bare.replace(/\.$/, '');
  return name === 'localhost' || name.endsWith('.localhost') ? 'localhost' : 'not-an-ip';
}

/**
 * Whether `host` is known to lead somewhere private without resolving it: `localhost` or an IP
 * address in a private, loopback, link-local or reserved range. A name is not: it is judged by
 * the addresses it resolves to (`isPublicAddress`).
 */
export function isPrivateHost(host: string): boolean {
  const kind = hostKind(host);
  return kind !== 'public' && kind !== 'not-an-ip';
}

/** Whether `address` (a resolver's answer) is an IP address in no private or reserved range. */
export function isPublicAddress(address: string): boolean {
  return hostKind(address) === 'public';
}

function ipv4Kind(address: number): HostKind {
  for (const [network, prefix, kind] of IPV4_RANGES) {
    const shift = 32 - prefix;
    if (address >>> shift === parseIPv4(network)! >>> shift) return kind;
  }
  return 'public';
}

function ipv6Kind(address: bigint): HostKind {
  for (const { network, prefix, shift } of IPV4_EMBEDDING) {
    if (inNetwork(address, network, prefix)) return ipv4Kind(Number((address >> shift) & 0xffffffffn));
  }
  for (const [network, prefix, kind] of IPV6_RANGES) {
    if (inNetwork(address, parseIPv6(network)!, prefix)) return kind;
  }
  return inNetwork(address, GLOBAL_UNICAST.network, GLOBAL_UNICAST.prefix) ? 'public' : 'reserved';
}

function inNetwork(address: bigint, network: bigint, prefix: number): boolean {
  const shift = BigInt(128 - prefix);
  return address >> shift === network >> shift;
}

function ipv6Network(network: string, prefix: number): { network: bigint; prefix: number } {
  return { network: parseIPv6(network)!, prefix };
}

/**
 * An IPv4 address as `inet_aton` and the WHATWG URL parser read it: one to four parts, each
 * decimal, octal (leading 0) or hex (0x), the last filling the bytes left (`127.1`, `2130706433`);
 * a trailing dot is allowed. Undefined for anything else.
 */
function parseIPv4(text: string): number | undefined {
  const parts = text.split('.');
  if (parts.length > 1 && parts.at(-1) === '') parts.pop();
  if (parts.length > 4) return undefined;
  const numbers = parts.map(parseIPv4Part);
  if (numbers.some((part) => part === undefined)) return undefined;
  const last = numbers.pop()!;
  if (numbers.some((part) => part! > 255) || last >= 256 ** (4 - numbers.length)) return undefined;
  return numbers.reduce<number>((sum, part, index) => sum + part! * 256 ** (3 - index), last);
}

function parseIPv4Part(part: string): number | undefined {
  if (/^0x[0-9a-f]*$/.test(part)) return part === '0x' ? 0 : parseInt(part.slice(2), 16);
  if (/^0[0-7]+$/.test(part)) return parseInt(part, 8);
  if (/^(0|[1-9][0-9]*)$/.test(part)) return Number(part);
  return undefined;
}

/**
 * An IPv6 address (lower case, no brackets or zone) as a 128-bit number: eight hex groups, one
 * `::` standing for one or more zero groups, and an optional dotted IPv4 address as the last two.
 */
function parseIPv6(text: string): bigint | undefined {
  const halves = text.split('::');
  if (halves.length > 2 || text.slice(0, text.lastIndexOf(':')).includes('.')) return undefined;
  const groups = halves.map((half) => (half === '' ? [] : half.split(':')).flatMap(parseIPv6Groups));
  if (groups.some((half) => half.includes(undefined))) return undefined;
  const [head, tail = []] = groups as number[][];
  const missing = 8 - head!.length - tail.length;
  if (halves.length === 1 ? missing !== 0 : missing < 1) return undefined;
  return [...head!, ...new Array<number>(halves.length === 1 ? 0 : missing).fill(0), ...tail].reduce(
    (sum, group) => (sum << 16n) | BigInt(group),
    0n,
  );
}

/** One hex group, or a dotted IPv4 address as two; undefined where invalid. */
function parseIPv6Groups(piece: string): (number | undefined)[] {
  if (/^[0-9a-f]{1,4}$/.test(piece)) return [parseInt(piece, 16)];
  const dotted = /^(\d{1,3})\.(\d{1,3})\.(\d{1,3})\.(\d{1,3})$/.exec(piece);
  if (!dotted) return [undefined];
  const bytes = dotted.slice(1).map(Number);
  if (bytes.some((byte) => byte > 255)) return [undefined];
  return [bytes[0]! * 256 + bytes[1]!, bytes[2]! * 256 + bytes[3]!];
}
