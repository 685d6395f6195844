/**
 * Every link into `docs/` resolves: the Markdown links of README.md and docs/*.md, and the
 * `docs/<file>.md#<anchor>` references of code comments, each to a file that exists and, with an
 * anchor, to one of its headings (GitHub's anchor rules).
 */
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { describe, expect, it } from 'vitest';

const root = resolve(import.meta.dirname, '..');

/** GitHub's anchor of a heading: its text lower-cased, punctuation dropped, spaces made hyphens. */
export function anchorOf(heading: string): string {
  return heading
    .replace(/\[([^\]]*)\]\([^)]*\)/g, '$1')
    .trim()
    .toLowerCase()
    .replace(/[^\p{L}\p{N}\p{M}\s_-]/gu, '')
    .replace(/\s/g, '-');
}

/** The anchors of a Markdown file's headings, numbered as GitHub numbers repeated ones. */
function anchorsOf(text: string): Set<string> {
  const anchors = new Set<string>();
  const seen = new Map<string, number>();
  let fenced = false;
  for (const line of text.split('\n')) {
    if (/^\s*(```|~~~)/.test(line)) fenced = !fenced;
    const heading = !fenced && /^#{1,6}\s+(.*?)\s*#*\s*$/.exec(line);
    if (!heading) continue;
    const base = anchorOf(heading[1]!);
    const count = seen.get(base) ?? 0;
    seen.set(base, count + 1);
    anchors.add(count === 0 ? base : `${base}-${count}`);
  }
  return anchors;
}

const anchorCache = new Map<string, Set<string>>();
function anchorsOfFile(path: string): Set<string> {
  let anchors = anchorCache.get(path);
  if (!anchors) anchorCache.set(path, (anchors = anchorsOf(readFileSync(path, 'utf8'))));
  return anchors;
}

/** What is wrong with a link to `target` (a path, maybe with `#anchor`), or undefined. */
function problemOf(path: string, anchor: string | undefined): string | undefined {
  if (!existsSync(path)) return 'no such file';
  if (anchor === undefined || anchor === '') return undefined;
  if (!path.endsWith('.md')) return undefined;
  return anchorsOfFile(path).has(anchor.toLowerCase()) ? undefined : `no heading with anchor #${anchor}`;
}

const markdownFiles = [
  join(root, 'README.md'),
  ...readdirSync(join(root, 'docs'))
    .filter((name) => name.endsWith('.md'))
    .map((name) => join(root, 'docs', name)),
];

const CODE_FOLDERS = ['apps', 'packages', 'bench', 'chaos', 'e2e', 'scripts', 'ops'];
const SKIPPED = new Set(['node_modules', 'dist', '.data', 'test-results', 'playwright-report']);

function codeFiles(folder: string): string[] {
  if (!existsSync(folder)) return [];
  return readdirSync(folder, { withFileTypes: true }).flatMap((entry) => {
    const path = join(folder, entry.name);
    if (entry.isDirectory()) return SKIPPED.has(entry.name) ? [] : codeFiles(path);
    return /\.(ts|tsx|mts|mjs|js|css|sql|yml|yaml)$/.test(entry.name) ? [path] : [];
  });
}

describe('links into docs/', () => {
  it('resolve from the Markdown of README.md and docs/', () => {
    const broken: string[] = [];
    for (const file of markdownFiles) {
      let fenced = false;
      readFileSync(file, 'utf8')
        .split('\n')
        .forEach((line, index) => {
          if (/^\s*(```|~~~)/.test(line)) fenced = !fenced;
          if (fenced) return;
          for (const match of line.matchAll(/\]\(([^)\s]+)\)/g)) {
            const target = match[1]!;
            if (/^[a-z]+:/i.test(target)) continue;
            const [path, anchor] = target.split('#') as [string, string | undefined];
            const resolved = path === '' ? file : resolve(dirname(file), path);
            const problem = problemOf(resolved, anchor);
            if (problem) broken.push(`${relative(root, file)}:${index + 1}: ${target}: ${problem}`);
          }
        });
    }
    expect(broken).toEqual([]);
  });

  it('resolve from code comments (docs/<file>.md#<anchor>)', () => {
    const broken: string[] = [];
    let links = 0;
    for (const file of CODE_FOLDERS.flatMap((folder) => codeFiles(join(root, folder)))) {
      readFileSync(file, 'utf8')
        .split('\n')
        .forEach((line, index) => {
          for (const match of line.matchAll(/\bdocs\/([\w.-]+\.md)(?:#([\w-]+))?/g)) {
            links++;
            const problem = problemOf(join(root, 'docs', match[1]!), match[2]);
            if (problem) broken.push(`${relative(root, file)}:${index + 1}: ${match[0]}: ${problem}`);
          }
        });
    }
    expect(links).toBeGreaterThan(0);
    expect(broken).toEqual([]);
  });

  it('computes anchors as GitHub does', () => {
    expect(anchorOf('What the target receives')).toBe('what-the-target-receives');
    expect(anchorOf('Pause, resume (and disable)')).toBe('pause-resume-and-disable');
    expect(anchorOf('Tokens: one account, two kinds of token')).toBe('tokens-one-account-two-kinds-of-token');
    expect(anchorOf('The fair claim (`packages/db/src/queue/claim.ts`)')).toBe(
      'the-fair-claim-packagesdbsrcqueueclaimts',
    );
    expect(anchorsOf('# A\n## A\n```\n## B\n```\n')).toEqual(new Set(['a', 'a-1']));
  });
});
