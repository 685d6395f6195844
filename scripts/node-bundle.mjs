// The esbuild options both production bundles (apps/dispatcher, apps/api) share: one ES module
// for plain Node of the pinned runtime (`nodeRuntime` in package.json), with a source map beside
// it. Each build.mjs adds its entry, output and the packages it must leave to Node's resolution
// at run time.
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { pinnedRuntime } from './node-runtime.mjs';

const runtime = pinnedRuntime(join(dirname(fileURLToPath(import.meta.url)), '..'));

/** knex requires the driver of whichever database it is pointed at; only pg is used here. */
const UNUSED_KNEX_DRIVERS = [
  'pg-native',
  'better-sqlite3',
  'sqlite3',
  'mysql',
  'mysql2',
  'mariadb',
  'mariadb/*',
  'oracledb',
  'tedious',
  'pg-query-stream',
];

/** esbuild `build()` options for `entry` bundled into `outfile`, with `external` left unbundled. */
export function nodeBundleOptions({ entry, outfile, external = [] }) {
  return {
    entryPoints: [entry],
    outfile,
    bundle: true,
    platform: 'node',
    format: 'esm',
    target: `node${runtime.version}`,
    sourcemap: true,
    external: [...UNUSED_KNEX_DRIVERS, ...external],
    // bundled CommonJS packages call require(); an ES module has none of its own (the import is
    // renamed so that a bundled module's own `import { createRequire }` does not clash with it)
    banner: {
      js: "import { createRequire as bundleRequire } from 'node:module'; const require = bundleRequire(import.meta.url);",
    },
    logLevel: 'warning',
  };
}
