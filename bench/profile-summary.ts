/**
 * Sums a V8 CPU profile (`.cpuprofile`, as `pnpm bench --profile DIR` writes) by where the time
 * went: self time per package or source file, self time per function, and inclusive time (the
 * function and everything it called) per function.
 *
 *   npx tsx bench/profile-summary.ts FILE.cpuprofile [--top N] [--per N]
 *
 * `--per N` also divides each figure by N (say, the requests the profiled process served), so
 * the columns read as milliseconds per request.
 */
import { existsSync, readFileSync } from 'node:fs';
import { SourceMap } from 'node:module';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';

interface ProfileNode {
  id: number;
  callFrame: { functionName: string; url: string; lineNumber: number; columnNumber: number };
  children?: number[];
}

interface Profile {
  nodes: ProfileNode[];
  samples: number[];
  timeDeltas: number[];
}

/** `node_modules/.pnpm/koa@3.0.1/node_modules/koa/lib/x.js` → `koa`; our own files by path. */
export function placeOf(url: string): string {
  if (!url) return '(native)';
  const modules = url.lastIndexOf('node_modules/');
  if (modules >= 0) {
    const rest = url.slice(modules + 'node_modules/'.length).split('/');
    return rest[0]!.startsWith('@') ? `${rest[0]}/${rest[1]}` : rest[0]!;
  }
  if (url.startsWith('node:')) return url;
  const repo = url.indexOf('/apps/') >= 0 ? url.indexOf('/apps/') : url.indexOf('/packages/');
  return repo >= 0 ? url.slice(repo + 1) : url;
}

const sourceMaps = new Map<string, SourceMap | undefined>();
/** The source map beside a bundle (`main.mjs.map`), if the frame is in one. */
function sourceMapOf(url: string): SourceMap | undefined {
  if (!url.startsWith('file://') || !url.endsWith('.mjs')) return undefined;
  if (!sourceMaps.has(url)) {
    const file = `${fileURLToPath(url)}.map`;
    sourceMaps.set(url, existsSync(file) ? new SourceMap(JSON.parse(readFileSync(file, 'utf8'))) : undefined);
  }
  return sourceMaps.get(url);
}

/** A frame in a bundle, mapped back to its source file and line (so `koa`, not `main.mjs`). */
function originalFrame(node: ProfileNode): { url: string; line: number } {
  const { url, lineNumber, columnNumber } = node.callFrame;
  const entry = sourceMapOf(url)?.findEntry(lineNumber, columnNumber);
  return entry && 'originalSource' in entry
    ? { url: entry.originalSource, line: entry.originalLine + 1 }
    : { url, line: lineNumber + 1 };
}

const nameOf = (node: ProfileNode) => {
  const { url, line } = originalFrame(node);
  return `${node.callFrame.functionName || '(anonymous)'} ${placeOf(url)}:${line}`;
};

/** Self and inclusive milliseconds per function, and self milliseconds per place. */
export function summarize(profile: Profile) {
  const byId = new Map(profile.nodes.map((node) => [node.id, node]));
  const parent = new Map<number, number>();
  for (const node of profile.nodes) for (const child of node.children ?? []) parent.set(child, node.id);
  const selfUs = new Map<number, number>();
  profile.samples.forEach((id, index) =>
    selfUs.set(id, (selfUs.get(id) ?? 0) + (profile.timeDeltas[index] ?? 0)),
  );

  const selfByFunction = new Map<string, number>();
  const selfByPlace = new Map<string, number>();
  const totalByFunction = new Map<string, number>();
  let totalUs = 0;
  for (const [id, us] of selfUs) {
    const node = byId.get(id)!;
    totalUs += us;
    const name = nameOf(node);
    selfByFunction.set(name, (selfByFunction.get(name) ?? 0) + us);
    const place = placeOf(originalFrame(node).url);
    selfByPlace.set(place, (selfByPlace.get(place) ?? 0) + us);
    // inclusive: each function on the stack once, however often it recurses
    const onStack = new Set<string>();
    for (let at: number | undefined = id; at !== undefined; at = parent.get(at))
      onStack.add(nameOf(byId.get(at)!));
    for (const fn of onStack) totalByFunction.set(fn, (totalByFunction.get(fn) ?? 0) + us);
  }
  return { totalUs, selfByFunction, selfByPlace, totalByFunction };
}

function main(): void {
  const { values, positionals } = parseArgs({
    allowPositionals: true,
    options: { top: { type: 'string', default: '25' }, per: { type: 'string' } },
  });
  if (positionals.length !== 1) {
    console.error('usage: tsx bench/profile-summary.ts FILE.cpuprofile [--top N] [--per N]');
    process.exit(2);
  }
  const profile = JSON.parse(readFileSync(positionals[0]!, 'utf8')) as Profile;
  const { totalUs, selfByFunction, selfByPlace, totalByFunction } = summarize(profile);
  const top = Number(values.top);
  const per = values.per ? Number(values.per) : 1;
  const unit = values.per ? 'ms per unit' : 'ms';
  const table = (title: string, map: Map<string, number>) => {
    console.log(`\n${title} (${unit}, % of all samples)`);
    for (const [name, us] of [...map].sort((a, b) => b[1] - a[1]).slice(0, top)) {
      const ms = us / 1000 / per;
      console.log(`${ms.toFixed(3).padStart(10)} ${((100 * us) / totalUs).toFixed(1).padStart(5)}%  ${name}`);
    }
  };
  console.log(
    `sampled ${(totalUs / 1000).toFixed(0)} ms${values.per ? `, ${(totalUs / 1000 / per).toFixed(3)} ${unit}` : ''}`,
  );
  table('self time by package or file', selfByPlace);
  table('self time by function', selfByFunction);
  table('inclusive time by function', totalByFunction);
}

if (import.meta.url === `file://${process.argv[1]}`) main();
