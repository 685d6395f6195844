// Bundles the dispatcher into one ES module, dist/main.mjs, for production: `node dist/main.mjs`.
// Plain Node then runs it, without tsx's loader thread or per-module resolution, which saves
// about 40 MB of resident memory and the start-up compile (docs/performance.md, "Memory").
import { fileURLToPath } from 'node:url';
import { build } from 'esbuild';

const here = (path) => fileURLToPath(new URL(path, import.meta.url));

await build({
  entryPoints: [here('src/main.ts')],
  outfile: here('dist/main.mjs'),
  bundle: true,
  platform: 'node',
  format: 'esm',
  target: 'node20',
  sourcemap: true,
  // knex requires the driver of whichever database it is pointed at; only pg is used here
  external: [
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
  ],
  // bundled CommonJS packages call require(); an ES module has none of its own
  banner: {
    js: "import { createRequire } from 'node:module'; const require = createRequire(import.meta.url);",
  },
  logLevel: 'warning',
});
