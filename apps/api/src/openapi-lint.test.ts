import { execFileSync } from 'node:child_process';
import { readdirSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';

const ROOT = join(import.meta.dirname, '..', '..', '..');
const API = join(ROOT, 'apps', 'api');
const DOCUMENTS = readdirSync(API).filter((name) => /^openapi.*\.json$/.test(name));

describe('OpenAPI documents lint clean with @redocly/cli (recommended rules, redocly.yaml)', () => {
  it('finds the documents', () => expect(DOCUMENTS).toContain('openapi.json'));

  it.each(DOCUMENTS)(
    '%s has no error or warning',
    (name) => {
      const output = execFileSync(
        join(ROOT, 'node_modules', '.bin', 'redocly'),
        ['lint', '--format=json', join(API, name)],
        { cwd: ROOT, encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'] },
      );
      const report = JSON.parse(output) as {
        totals: { errors: number; warnings: number };
        problems: unknown[];
      };
      expect(report.problems).toEqual([]);
      expect(report.totals).toMatchObject({ errors: 0, warnings: 0 });
    },
    60_000,
  );
});
