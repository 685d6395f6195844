import { existsSync, readFileSync, readdirSync, statSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import ts from 'typescript';
import { describe, expect, it } from 'vitest';

/**
 * Test code stays out of `src/` (docs/decisions.md › Test helpers): every file under a package's
 * `src/` is imported by production code, or is an entry point. A helper only tests import belongs
 * in the package's `tests/` folder or in the test kit (`packages/testkit`, test code by design).
 */
const ROOT = resolve(import.meta.dirname, '..');
const SKIP = new Set([
  'node_modules',
  'dist',
  '.data',
  '.git',
  '.turbo',
  'test-results',
  'playwright-report',
]);
const SOURCE = /\.(ts|tsx|mts|mjs)$/;

function walk(folder: string, files: string[] = []): string[] {
  for (const name of readdirSync(folder)) {
    if (SKIP.has(name)) continue;
    const path = join(folder, name);
    if (statSync(path).isDirectory()) walk(path, files);
    else if (SOURCE.test(name)) files.push(path);
  }
  return files;
}

const isTest = (file: string) => {
  const path = relative(ROOT, file);
  return /\.(test|spec)\.tsx?$/.test(path) || /(^|\/)(tests|e2e)\//.test(path) || /\.setup\.ts$/.test(path);
};

const packageDirs = ['apps', 'packages'].flatMap((group) =>
  readdirSync(join(ROOT, group))
    .map((name) => join(ROOT, group, name))
    .filter((dir) => existsSync(join(dir, 'package.json'))),
);
const packages = new Map(
  packageDirs.map((dir) => {
    const json = JSON.parse(readFileSync(join(dir, 'package.json'), 'utf8')) as {
      name: string;
      exports?: string | Record<string, string | Record<string, string>>;
      scripts?: Record<string, string>;
    };
    return [json.name, { dir, json }];
  }),
);

function resolveFile(path: string): string | undefined {
  const candidates = [
    path,
    `${path}.ts`,
    `${path}.tsx`,
    join(path, 'index.ts'),
    path.replace(/\.js$/, '.ts'),
  ];
  return candidates.find((candidate) => existsSync(candidate) && statSync(candidate).isFile());
}

function resolveImport(from: string, specifier: string): string | undefined {
  if (specifier.startsWith('.')) return resolveFile(resolve(dirname(from), specifier));
  const name = [...packages.keys()].find((n) => specifier === n || specifier.startsWith(`${n}/`));
  if (!name) return undefined;
  const { dir, json } = packages.get(name)!;
  const sub = specifier === name ? '.' : `./${specifier.slice(name.length + 1)}`;
  const exported = typeof json.exports === 'string' ? { '.': json.exports }[sub] : json.exports?.[sub];
  // a conditional export: the file an import resolves to
  const target = typeof exported === 'object' ? (exported.import ?? exported.default) : exported;
  return target ? resolveFile(join(dir, target)) : resolveFile(join(dir, sub === '.' ? 'src/index' : sub));
}

/** Files a package.json script or an HTML page starts, and every `main.ts(x)`: run, not imported. */
function entryPoints(): Set<string> {
  const named = [readFileSync(join(ROOT, 'package.json'), 'utf8')];
  for (const { dir } of packages.values()) {
    named.push(readFileSync(join(dir, 'package.json'), 'utf8'));
    for (const extra of ['index.html', 'build.mjs']) {
      if (existsSync(join(dir, extra))) named.push(readFileSync(join(dir, extra), 'utf8'));
    }
  }
  const text = named.join('\n');
  return new Set(
    walk(ROOT).filter(
      (file) =>
        /\/src\/main\.tsx?$/.test(file) || text.includes(relative(ROOT, file).split('/').slice(2).join('/')),
    ),
  );
}

describe('the source layout', () => {
  it('has no file under a src/ folder that only tests import', () => {
    const files = walk(ROOT);
    const importers = new Map<string, Set<string>>();
    for (const file of files) {
      const { importedFiles } = ts.preProcessFile(readFileSync(file, 'utf8'), true, true);
      for (const { fileName } of importedFiles) {
        const target = resolveImport(file, fileName);
        if (!target) continue;
        if (!importers.has(target)) importers.set(target, new Set());
        importers.get(target)!.add(file);
      }
    }
    const entries = entryPoints();
    // test-only: a test, or imported by test-only files alone
    const testOnly = new Set(files.filter(isTest));
    for (let grew = true; grew;) {
      grew = false;
      for (const file of files) {
        if (testOnly.has(file) || entries.has(file)) continue;
        const by = [...(importers.get(file) ?? [])];
        if (by.length && by.every((importer) => testOnly.has(importer))) {
          testOnly.add(file);
          grew = true;
        }
      }
    }
    const misplaced = files
      .filter((file) => /\/src\//.test(relative(ROOT, file)) && !isTest(file))
      .filter((file) => !relative(ROOT, file).startsWith('packages/testkit/'))
      .filter((file) => testOnly.has(file) || (!importers.get(file)?.size && !entries.has(file)))
      .map((file) => relative(ROOT, file));
    expect(misplaced, 'files under src/ that only tests import (or nothing at all)').toEqual([]);
  });
});
