// Bundles the API into one ES module, dist/main.mjs, for production: `node dist/main.mjs` (its
// `start` script). Plain Node then runs compiled JavaScript, without tsx's loader thread and
// per-module transform (docs/performance.md#api-cpu).
import { fileURLToPath } from 'node:url';
import { build } from 'esbuild';
import { nodeBundleOptions } from '../../scripts/node-bundle.mjs';

const here = (path) => fileURLToPath(new URL(path, import.meta.url));

await build(
  nodeBundleOptions({
    entry: here('src/main.ts'),
    outfile: here('dist/main.mjs'),
    external: [
      // a native module: Node loads its platform's prebuilt binary from node_modules
      '@node-rs/argon2',
      // serves its own files (Swagger UI at /docs) from its folder in node_modules
      'swagger-ui-dist',
    ],
  }),
);
