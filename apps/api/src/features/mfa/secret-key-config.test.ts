import { randomBytes } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { loadConfig } from '../../config';

const base = { DATABASE_URL: 'postgres://postgres@127.0.0.1:5432/postgres' };

describe('SECRET_ENCRYPTION_KEY', () => {
  it('is optional (a development start generates a key file)', () => {
    expect(loadConfig(base).SECRET_ENCRYPTION_KEY).toBeUndefined();
  });

  it('takes the base64 of 32 bytes', () => {
    const key = randomBytes(32).toString('base64');
    expect(loadConfig({ ...base, SECRET_ENCRYPTION_KEY: key }).SECRET_ENCRYPTION_KEY).toBe(key);
  });

  it('refuses anything else at start-up, naming the variable', () => {
    for (const bad of ['abc', randomBytes(16).toString('base64'), 'not base64!']) {
      expect(() => loadConfig({ ...base, SECRET_ENCRYPTION_KEY: bad })).toThrow(
        /SECRET_ENCRYPTION_KEY: must be/,
      );
    }
  });
});
