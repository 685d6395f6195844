import { hostKind } from '@platform/shared';

/**
 * Why the host of `url` may not be a webhook target where private targets are not allowed: a
 * literal private address (in any spelling) or `localhost` (and its subdomains, RFC 6761). Names
 * that merely resolve to such addresses are the dispatcher's to refuse, at connect time (design
 * part 4).
 */
export function privateTargetProblem(url: string): string | undefined {
  const host = new URL(url).hostname;
  const kind = hostKind(host);
  if (kind === 'public' || kind === 'not-an-ip') return undefined;
  if (kind === 'localhost') return 'must not point at localhost: private targets are not allowed here';
  return `must not point at the private, loopback or link-local address ${host}: private targets are not allowed here`;
}
