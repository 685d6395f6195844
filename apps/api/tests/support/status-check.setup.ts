import { mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { basename, join } from 'node:path';
import { afterAll, beforeAll, expect } from 'vitest';
import { STATUS_DIR, readObserved, statusFileOf } from './status-recorder';

/**
 * A vitest setup file (vitest.config.ts): in every test file, the statuses the shared test client
 * observed (`status-recorder.ts`) should each be documented in OpenAPI, or be listed in
 * docs/openapi-status-gaps.md. Checked per file in its `afterAll`, so parallel workers never wait
 * for each other and a report names the file whose tests saw the status. A gap is written to
 * `<STATUS_DIR>/gaps/` and fails the file; `API_STATUS_CHECK=warn` only warns (to collect every gap
 * of a run at once).
 */
const testFile = expect.getState().testPath ?? '';

beforeAll(() => {
  rmSync(statusFileOf(testFile), { force: true });
  rmSync(join(STATUS_DIR, 'gaps', basename(statusFileOf(testFile))), { force: true });
});

afterAll(async () => {
  const observed = readObserved(testFile);
  if (!observed.length) return;
  const [{ undocumentedStatuses, knownGaps, formatGap }, { buildOpenApiDocument }, { ROUTES }, gen1] =
    await Promise.all([
      import('./openapi-statuses'),
      import('../../src/http/openapi'),
      import('../../src/routes'),
      import('../../src/gen1/gen1-openapi'),
    ]);
  const known = knownGaps();
  const gaps = undocumentedStatuses(observed, [buildOpenApiDocument(ROUTES), gen1.buildGen1OpenApiDocument()])
    .map(formatGap)
    .filter((gap) => !known.has(gap));
  if (!gaps.length) return;
  mkdirSync(join(STATUS_DIR, 'gaps'), { recursive: true });
  writeFileSync(join(STATUS_DIR, 'gaps', basename(statusFileOf(testFile))), JSON.stringify(gaps));
  const message = 'statuses the tests observed that OpenAPI does not document';
  if (process.env.API_STATUS_CHECK !== 'warn') expect(gaps, message).toEqual([]);
  else console.warn(`${message} (${testFile}):\n${gaps.map((gap) => `- \`${gap}\``).join('\n')}`);
});
