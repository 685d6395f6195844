import { describe, expect, it } from 'vitest';
import { buildOpenApiDocument } from '../src/http/openapi';
import { buildGen1OpenApiDocument } from '../src/gen1/gen1-openapi';
import { formatGap, knownGaps, undocumentedStatuses } from './support/openapi-statuses';
import { ROUTES } from '../src/routes';
import { readObserved } from './support/status-recorder';
import { useTestApi } from './support/api';

const documents = [buildOpenApiDocument(ROUTES), buildGen1OpenApiDocument()];

const { api } = useTestApi();

describe('every status the API tests observe is documented in OpenAPI', () => {
  it('the shared test client records method, path (no query) and status for this test file', async () => {
    const response = await api.fetch('/api/accounts/7?fields=email');
    expect(response.status).toBe(401);
    expect(readObserved(expect.getState().testPath!)).toContainEqual({
      method: 'GET',
      path: '/api/accounts/7',
      status: 401,
    });
  });

  it('matches a path to its route template and lists only the statuses the operation lacks', () => {
    const gaps = undocumentedStatuses(
      [
        { method: 'GET', path: '/api/accounts/7', status: 200 },
        { method: 'GET', path: '/api/accounts/7', status: 404 },
        { method: 'GET', path: '/api/accounts/7', status: 418 },
        { method: 'GET', path: '/api/accounts/8', status: 418 },
        { method: 'POST', path: '/api/auth/refresh', status: 401 },
        { method: 'POST', path: '/api/auth/login', status: 418 },
        // the literal template wins over /api/accounts/{id}
        { method: 'POST', path: '/api/accounts/search', status: 418 },
        // Gen1 routes are checked against the Gen1 document
        { method: 'GET', path: '/companies/3', status: 200 },
        { method: 'GET', path: '/companies/3', status: 418 },
        // not a route: no operation to document it
        { method: 'GET', path: '/api/no-such-thing', status: 404 },
        { method: 'PATCH', path: '/api/auth/refresh', status: 405 },
        { method: 'GET', path: '/api/accounts/unblock-recovery-code', status: 405 },
        // a server fault is not a route's contract
        { method: 'POST', path: '/api/auth/login', status: 500 },
      ],
      documents,
    ).map(formatGap);
    expect(gaps).toEqual([
      'GET /api/accounts/{id} 418',
      'GET /companies/{id} 418',
      'POST /api/accounts/search 418',
      'POST /api/auth/login 418',
    ]);
  });

  it('every gap listed in docs/openapi-status-gaps.md is still a gap (remove fixed ones)', () => {
    const listed = [...knownGaps()].map((line) => {
      const [method, template, status] = line.split(' ');
      return { method: method!, template: template!, status: Number(status) };
    });
    const stillGaps = undocumentedStatuses(
      listed.map(({ method, template, status }) => ({
        method,
        path: template.replace(/\{\w+\}/g, '1'),
        status,
      })),
      documents,
    ).map(formatGap);
    expect(stillGaps.sort()).toEqual([...knownGaps()].sort());
  });
});
