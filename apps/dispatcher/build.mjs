// Bundles the dispatcher into one ES module, dist/main.mjs, for production: `node dist/main.mjs`.
// Plain Node then runs it, without tsx's loader thread or per-module resolution, which saves
// about 40 MB of resident memory and the start-up compile (docs/performance.md#memory).
import { fileURLToPath } from 'node:url';
import { build } from 'esbuild';
import { nodeBundleOptions } from '../../scripts/node-bundle.mjs';

const here = (path) => fileURLToPath(new URL(path, import.meta.url));

await build(nodeBundleOptions({ entry: here('src/main.ts'), outfile: here('dist/main.mjs') }));
