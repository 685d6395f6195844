import { describe, expect, it } from 'vitest';
import { hostKind, isPrivateHost, isPublicAddress, type HostKind } from './private-address';

/** Every spelling a target or a resolver's answer may take, with what it is. */
const HOSTS: [host: string, kind: HostKind][] = [
  // IPv4 loopback in every spelling inet_aton and the URL parser accept
  ['127.0.0.1', 'loopback'],
  ['127.255.255.254', 'loopback'],
  ['2130706433', 'loopback'],
  ['0177.0.0.1', 'loopback'],
  ['0x7f.0.0.1', 'loopback'],
  ['0X7F.0.0.1', 'loopback'],
  ['0x7f000001', 'loopback'],
  ['127.1', 'loopback'],
  ['127.0.1', 'loopback'],
  ['127.0.0.1.', 'loopback'],
  // the other IPv4 ranges
  ['0.0.0.0', 'unspecified'],
  ['0', 'unspecified'],
  ['10.1.2.3', 'private'],
  ['012.1.2.3', 'private'],
  ['172.16.0.1', 'private'],
  ['172.31.255.255', 'private'],
  ['192.168.1.10', 'private'],
  ['100.64.0.1', 'carrier-grade-nat'],
  ['100.127.255.255', 'carrier-grade-nat'],
  ['169.254.169.254', 'link-local'],
  ['192.0.0.170', 'reserved'],
  ['198.18.0.1', 'benchmarking'],
  ['198.19.255.255', 'benchmarking'],
  ['224.0.0.1', 'multicast'],
  ['239.255.255.250', 'multicast'],
  ['240.0.0.1', 'reserved'],
  ['255.255.255.255', 'reserved'],
  // IPv6
  ['::', 'unspecified'],
  ['::1', 'loopback'],
  ['[::1]', 'loopback'],
  ['0:0:0:0:0:0:0:1', 'loopback'],
  ['fe80::1', 'link-local'],
  ['fe80::1%eth0', 'link-local'],
  ['[fe80::1%25eth0]', 'link-local'],
  ['febf::1', 'link-local'],
  ['fc00::1', 'unique-local'],
  ['fd00::1', 'unique-local'],
  ['FD12:3456:789A::1', 'unique-local'],
  ['ff02::1', 'multicast'],
  ['2001:2::1', 'benchmarking'],
  ['2001:0:4136:e378:8000:63bf:3fff:fdd2', 'reserved'],
  ['fec0::1', 'reserved'],
  ['::7f00:1', 'reserved'],
  ['100::1', 'reserved'],
  ['64:ff9b:1::a00:1', 'reserved'],
  // IPv6 standing for an IPv4 address: judged by that address
  ['::ffff:127.0.0.1', 'loopback'],
  ['::ffff:7f00:1', 'loopback'],
  ['[::ffff:127.0.0.1]', 'loopback'],
  ['::ffff:a9fe:a9fe', 'link-local'],
  ['::FFFF:10.0.0.1', 'private'],
  ['64:ff9b::7f00:1', 'loopback'],
  ['64:ff9b::127.0.0.1', 'loopback'],
  ['64:ff9b::c0a8:1', 'private'],
  ['2002:7f00:1::1', 'loopback'],
  ['2002:a9fe:a9fe::', 'link-local'],
  // names
  ['localhost', 'localhost'],
  ['LOCALHOST', 'localhost'],
  ['localhost.', 'localhost'],
  ['api.localhost', 'localhost'],
  ['api.localhost.', 'localhost'],
  ['example.com', 'not-an-ip'],
  ['localhost.example.com', 'not-an-ip'],
  ['notlocalhost', 'not-an-ip'],
  ['', 'not-an-ip'],
  // public: must never be refused
  ['8.8.8.8', 'public'],
  ['1.1.1.1', 'public'],
  ['100.128.0.1', 'public'],
  ['100.63.255.255', 'public'],
  ['172.32.0.1', 'public'],
  ['169.255.0.1', 'public'],
  ['198.20.0.1', 'public'],
  ['223.255.255.255', 'public'],
  ['134744072', 'public'],
  ['0x8.0x8.0x8.0x8', 'public'],
  ['2001:4860::8888', 'public'],
  ['[2001:4860:4860::8888]', 'public'],
  ['2606:4700:4700::1111', 'public'],
  ['2001:200::1', 'public'],
  ['::ffff:8.8.8.8', 'public'],
  ['::ffff:808:808', 'public'],
  ['64:ff9b::8.8.8.8', 'public'],
  ['2002:808:808::1', 'public'],
  // not IP addresses, whatever they look like: a name, for the resolver to answer
  ['1.2.3.256', 'not-an-ip'],
  ['256.0.0.1', 'not-an-ip'],
  ['1.2.3.4.5', 'not-an-ip'],
  ['08.0.0.1', 'not-an-ip'],
  ['1..2', 'not-an-ip'],
  ['0x100000000', 'not-an-ip'],
  ['4294967296', 'not-an-ip'],
  ['1::2::3', 'not-an-ip'],
  ['1:2:3:4:5:6:7', 'not-an-ip'],
  ['1:2:3:4:5:6:7:8:9', 'not-an-ip'],
  ['1:2:3:4::5:6:7:8', 'not-an-ip'],
  ['12345::1', 'not-an-ip'],
  ['::1.2.3.4:5', 'not-an-ip'],
  ['::ffff:127.0.0.256', 'not-an-ip'],
  ['fe80::g', 'not-an-ip'],
];

describe('hostKind', () => {
  it.each(HOSTS)('%s is %s', (host, kind) => {
    expect(hostKind(host)).toBe(kind);
  });

  // the URL parser normalises IPv4 spellings in a URL's host (the registration check relies on it,
  // docs/dispatcher.md#private-targets); the raw spellings above are what resolvers and hosts files may hand over
  it('agrees with the URL parser on the host it makes of each spelling', () => {
    for (const [host, kind] of HOSTS) {
      if (kind === 'not-an-ip' || host.includes('%')) continue;
      const hostname = new URL(`http://${host.includes(':') && !host.startsWith('[') ? `[${host}]` : host}/`)
        .hostname;
      expect(hostKind(hostname), `${host} → ${hostname}`).toBe(kind);
    }
  });
});

describe('isPrivateHost and isPublicAddress', () => {
  it('tell a name apart: not private before resolving, and never a public address', () => {
    expect([isPrivateHost('example.com'), isPublicAddress('example.com')]).toEqual([false, false]);
    expect([isPrivateHost('localhost.'), isPublicAddress('localhost.')]).toEqual([true, false]);
    expect([isPrivateHost('::ffff:127.0.0.1'), isPublicAddress('::ffff:127.0.0.1')]).toEqual([true, false]);
    expect([isPrivateHost('8.8.8.8'), isPublicAddress('8.8.8.8')]).toEqual([false, true]);
  });
});
