import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { expect } from 'vitest';

/**
 * Records every (method, path, status) a test file observes through the shared test HTTP client
 * (`startTestApi().fetch`), one JSON file per test file under a temp dir, so that a check (run in
 * the same file's `afterAll`, see `status-check.setup.ts`) can assert each is documented in OpenAPI.
 * A file per test file keeps parallel vitest workers from writing the same file.
 */
export interface ObservedStatus {
  method: string;
  /** The request path without its query string, e.g. `/api/accounts/7`. */
  path: string;
  status: number;
}

export const STATUS_DIR = process.env.API_STATUS_DIR ?? join(tmpdir(), 'platform-api-statuses');

const observed = new Map<string, Map<string, ObservedStatus>>();

function currentTestFile(): string {
  return expect.getState().testPath ?? `pid-${process.pid}`;
}

/** The JSON file a test file's observations are written to. */
export function statusFileOf(testFile: string): string {
  return join(STATUS_DIR, `${testFile.replace(/[^A-Za-z0-9.-]+/g, '_')}.json`);
}

export function recordStatus(method: string, path: string, status: number): void {
  const testFile = currentTestFile();
  const entry: ObservedStatus = {
    method: method.toUpperCase(),
    path: path.split('?')[0]!.split('#')[0]!,
    status,
  };
  const key = `${entry.method} ${entry.path} ${status}`;
  let mine = observed.get(testFile);
  if (!mine) observed.set(testFile, (mine = new Map()));
  if (mine.has(key)) return;
  mine.set(key, entry);
  mkdirSync(STATUS_DIR, { recursive: true });
  writeFileSync(statusFileOf(testFile), JSON.stringify([...mine.values()], null, 1));
}

/** What this process recorded for a test file (the file written above, read back). */
export function readObserved(testFile: string): ObservedStatus[] {
  try {
    return JSON.parse(readFileSync(statusFileOf(testFile), 'utf8')) as ObservedStatus[];
  } catch {
    return [];
  }
}
