import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { Validator } from '@seriousme/openapi-schema-validator';
import { describe, expect, it } from 'vitest';
import { useTestApi } from '../../tests/support/api';
import { buildGen1OpenApiDocument, gen1OperationId } from './gen1-openapi';
import { GEN1_ROUTES, UNSERVED_ROUTES, UNSERVED_VIEWS } from './gen1-routes';

const SNAPSHOT = join(import.meta.dirname, '..', '..', 'openapi.gen1.json');

type Operation = {
  operationId?: string;
  tags?: string[];
  parameters?: { name: string; in: string }[];
  responses: Record<string, unknown>;
};
const METHODS = ['get', 'put', 'post', 'delete', 'patch'] as const;

function operations(document: ReturnType<typeof buildGen1OpenApiDocument>) {
  return Object.entries(document.paths ?? {}).flatMap(([path, item]) =>
    METHODS.flatMap((method) => {
      const operation = (item as Record<string, Operation | undefined>)[method];
      return operation ? [{ path, method, operation }] : [];
    }),
  );
}

const { api } = useTestApi();

describe('Gen1 OpenAPI document', () => {
  it('matches the committed apps/api/openapi.gen1.json (run `pnpm openapi` after changing a Gen1 route)', () => {
    const current = `${JSON.stringify(buildGen1OpenApiDocument(), null, 2)}\n`;
    if (process.env.UPDATE_OPENAPI === '1') writeFileSync(SNAPSHOT, current);
    expect(current).toBe(readFileSync(SNAPSHOT, 'utf8'));
  });

  it('is valid OpenAPI 3.1', async () => {
    const validator = new Validator();
    const result = await validator.validate(
      buildGen1OpenApiDocument() as unknown as Parameters<Validator['validate']>[0],
    );
    expect(result.errors ?? []).toEqual([]);
    expect(result.valid).toBe(true);
    expect(validator.version).toBe('3.1');
  });

  it('lists every Gen1 route, each with a unique, stable operationId, a tag and a 4xx answer', () => {
    const document = buildGen1OpenApiDocument();
    const listed = operations(document);
    expect(listed).toHaveLength(GEN1_ROUTES.length - UNSERVED_ROUTES.size);
    const ids = listed.map(({ operation }) => operation.operationId);
    expect(new Set(ids).size).toBe(ids.length);
    for (const { path, method, operation } of listed) {
      expect(operation.operationId).toBe(gen1OperationId(method, path));
      expect(operation.tags).toEqual(['Gen1']);
      expect(Object.keys(operation.responses).some((status) => status.startsWith('4'))).toBe(true);
    }
    expect(gen1OperationId('get', '/companies/{id}')).toBe('gen1GetCompaniesById');
    expect(document.servers).toEqual([expect.objectContaining({ url: '/' })]);
    expect(document.info.license?.name).toBeTruthy();
    expect(document.tags?.map((tag) => tag.name)).toEqual(['Gen1']);
  });

  it('documents path and query parameters, and no api-version header (Gen1 ignores it)', () => {
    const listed = operations(buildGen1OpenApiDocument());
    for (const { path, operation } of listed) {
      const names = (operation.parameters ?? []).map((parameter) => parameter.name);
      expect(names).not.toContain('api-version');
      for (const [, name] of path.matchAll(/\{(\w+)\}/g)) expect(names, path).toContain(name);
    }
    const flats = listed.find(({ path, method }) => path === '/flats' && method === 'get')!.operation;
    expect(flats.parameters!.map((parameter) => parameter.name)).toEqual(
      expect.arrayContaining(['page', 'page_size', 'object_id']),
    );
  });

  it('names the unserved views (501) in its description, not as operations without a success answer', () => {
    const document = buildGen1OpenApiDocument();
    const paths = Object.keys(document.paths ?? {});
    for (const [name, gen2] of Object.entries(UNSERVED_VIEWS)) {
      expect(paths.filter((path) => path.split('/')[1] === name)).toEqual([]);
      expect(document.info.description).toContain(`\`/${name}\` (Gen2 ${gen2})`);
    }
    for (const { operation } of operations(document)) {
      expect(Object.keys(operation.responses).some((status) => status.startsWith('2'))).toBe(true);
    }
  });

  it('is served at /openapi.gen1.json without a token, and offered in /docs beside Gen2', async () => {
    const response = await api.fetch('/openapi.gen1.json');
    expect(response.status).toBe(200);
    expect(await response.json()).toEqual(JSON.parse(JSON.stringify(buildGen1OpenApiDocument())));
    const init = await (await api.fetch('/docs/init.js')).text();
    expect(init).toContain("'/openapi.gen1.json'");
    expect(init).toContain("'/api/openapi.json'");
    const preset = await api.fetch('/docs/swagger-ui-standalone-preset.js');
    expect(preset.status).toBe(200);
  });
});
