/**
 * Which hosts a webhook may not reach where private targets are not allowed
 * (docs/dispatcher.md#private-targets): the
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

/**
 * IP addresses are 128-bit numbers here, IPv4 ones as IPv4-mapped IPv6 (`::ffff:a.b.c.d`), the way
 * a dual-stack socket sees them, so one table holds both families.
 */
const IPV4_MAPPED = 0xffff_0000_0000n;

// First match wins, so the more specific row comes first.
const RANGES = (
  [
    // IPv4: "this network" (0.0.0.0 reaches the local host on Linux), RFC 1918, RFC 6598 shared
    // space, link-local (cloud metadata lives at 169.254.169.254), IETF protocol assignments,
    // RFC 2544 benchmarking, multicast, and the reserved rest up to the broadcast address
    ['0.0.0.0/8', 'unspecified'],
    ['10.0.0.0/8', 'private'],
    ['100.64.0.0/10', 'carrier-grade-nat'],
    ['127.0.0.0/8', 'loopback'],
    ['169.254.0.0/16', 'link-local'],
    ['172.16.0.0/12', 'private'],
    ['192.0.0.0/24', 'reserved'],
    ['192.168.0.0/16', 'private'],
    ['198.18.0.0/15', 'benchmarking'],
    ['224.0.0.0/4', 'multicast'],
    ['240.0.0.0/4', 'reserved'],
    // IPv6; 2001::/23 is the IETF protocol assignments block (Teredo among them), like 192.0.0.0/24
    ['::/128', 'unspecified'],
    ['::1/128', 'loopback'],
    ['fc00::/7', 'unique-local'],
    ['fe80::/10', 'link-local'],
    ['ff00::/8', 'multicast'],
    ['2001:2::/48', 'benchmarking'],
    ['2001::/23', 'reserved'],
  ] as const
).map(([cidr, kind]) => ({ ...network(cidr), kind }));

// Only 2000::/3 is allocated as global unicast: everything outside it that no row names (site-local
// fec0::/10, IPv4-compatible ::/96, discard 100::/64, NAT64's local-use 64:ff9b:1::/48) is reserved.
// IPv4 addresses that no row names are public.
const PUBLIC = [network('2000::/3'), network('::ffff:0:0/96')];

// IPv6 addresses that a translator or relay sends towards the IPv4 address they carry (NAT64's
// well-known prefix, 6to4), judged by that address; `shift` is where it sits, in bits from the right.
const CARRYING_IPV4 = [
  { ...network('64:ff9b::/96'), shift: 0n },
  { ...network('2002::/16'), shift: 80n },
];

/** What `host` is: an IP address in any spelling (brackets and a zone id allowed), or a name. */
export function hostKind(host: string): HostKind {
  const bare = host.toLowerCase().replace(/^\[(.*)\]$/, '$1');
  const address = parseAddress(bare.replace(/%.*$/, ''));
  if (address !== undefined) return addressKind(address);
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

function addressKind(address: bigint): HostKind {
  for (const carrier of CARRYING_IPV4) {
    if (inNetwork(address, carrier)) address = IPV4_MAPPED | ((address >> carrier.shift) & 0xffff_ffffn);
  }
  for (const range of RANGES) {
    if (inNetwork(address, range)) return range.kind;
  }
  return PUBLIC.some((range) => inNetwork(address, range)) ? 'public' : 'reserved';
}

function inNetwork(address: bigint, { network, prefix }: { network: bigint; prefix: number }): boolean {
  const shift = BigInt(128 - prefix);
  return address >> shift === network >> shift;
}

/** An IPv4 or IPv6 address (lower case, no brackets or zone) as a number; undefined for a name. */
function parseAddress(text: string): bigint | undefined {
  if (text.includes(':')) return parseIPv6(text);
  const ipv4 = parseIPv4(text);
  return ipv4 === undefined ? undefined : IPV4_MAPPED | BigInt(ipv4);
}

/** `address/prefix`, the prefix of an IPv4 network counted within its mapped form. */
function network(cidr: string): { network: bigint; prefix: number } {
  const [address, prefix] = cidr.split('/') as [string, string];
  return { network: parseAddress(address)!, prefix: Number(prefix) + (address.includes(':') ? 0 : 96) };
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
