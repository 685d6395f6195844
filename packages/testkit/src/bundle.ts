import { execFile } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { ROOT } from './processes';

/** The apps production runs as an esbuild bundle, `apps/<app>/dist/main.mjs`. */
export type BundledApp = 'api' | 'dispatcher';

/** The bundle production runs, relative to the repository's root. */
export const bundleFile = (app: BundledApp) => `apps/${app}/dist/main.mjs`;

/**
 * The Node flags production starts `app`'s bundle with: those of the `start` script in its
 * package.json (the dispatcher's bound the young generation and the heap; docs/performance.md).
 */
export function productionNodeFlags(app: BundledApp): string[] {
  const { scripts } = JSON.parse(readFileSync(join(ROOT, `apps/${app}/package.json`), 'utf8')) as {
    scripts: { start: string };
  };
  return scripts.start.split(' ').filter((word) => word.startsWith('--'));
}

const built = new Map<BundledApp, Promise<unknown>>();
/** Builds `app`'s production bundle (its build.mjs) once per process. */
export function buildBundle(app: BundledApp): Promise<unknown> {
  let build = built.get(app);
  if (!build) {
    build = promisify(execFile)(process.execPath, [`apps/${app}/build.mjs`], { cwd: ROOT });
    built.set(app, build);
  }
  return build;
}
