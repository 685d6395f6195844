import fc from 'fast-check';
import { it } from 'vitest';
import { buildOpenApiDocument } from '../http/openapi';
import { ROUTES } from '../routes';
import { caseArbitrary, operationsOf, renderCase, type OpenApiDocument } from './fuzz-cases';

it('gen', () => {
  const document = buildOpenApiDocument(ROUTES) as unknown as OpenApiDocument;
  const ops = operationsOf(document, () => ({ auth: { allow: [1, 2] }, textual: false }));
  let t = performance.now();
  const arbs = ops.map((op) => caseArbitrary(op, { document, ids: fc.integer({ min: 1, max: 40 }) }));
  console.log('build', performance.now() - t);
  t = performance.now();
  const all = ops.map((op, i) => [op, fc.sample(arbs[i]!, { numRuns: 200, seed: 1 })] as const);
  console.log('generate', performance.now() - t);
  t = performance.now();
  let bytes = 0;
  for (const [op, cases] of all) for (const c of cases) bytes += renderCase(op, c, () => 'Bearer x').body?.length ?? 0;
  console.log('render', performance.now() - t, 'bytes', bytes);
}, 120000);
