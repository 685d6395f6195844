import { randomBytes } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import {
  createSecretBox,
  generateSecretKey,
  parseSecretKey,
  rememberingOpen,
  resolveSecretKey,
  SECRET_KEY_BYTES,
  SecretBoxError,
  type SecretBox,
} from './secret-box';

const key = randomBytes(32);
const box = createSecretBox(key);

/** `sealed` with one base64url part replaced by `change(part)`. */
function withPart(sealed: string, index: number, change: (part: Buffer) => Buffer): string {
  const parts = sealed.split('.');
  parts[index] = change(Buffer.from(parts[index]!, 'base64url')).toString('base64url');
  return parts.join('.');
}

const flipFirstBit = (bytes: Buffer) => {
  const copy = Buffer.from(bytes);
  copy[0] = copy[0]! ^ 1;
  return copy;
};

describe('secret box', () => {
  it('opens what it sealed, for empty, ASCII and multi-byte texts', () => {
    for (const text of ['', 'JBSWY3DPEHPK3PXP', 'pässwörd 🔑', 'x'.repeat(10_000)]) {
      expect(box.open(box.seal(text))).toBe(text);
    }
  });

  it('writes v1.<iv>.<tag>.<ciphertext> in base64url, with a fresh IV each time', () => {
    const first = box.seal('same text');
    const second = box.seal('same text');
    expect(first).toMatch(/^v1\.[A-Za-z0-9_-]{16}\.[A-Za-z0-9_-]{22}\.[A-Za-z0-9_-]+$/);
    expect(first).not.toBe(second);
    expect(first.split('.')[1]).not.toBe(second.split('.')[1]);
    expect(first).not.toContain('same text');
    expect(Buffer.from(first.split('.')[3]!, 'base64url').toString()).not.toContain('same');
  });

  it('detects a change to the IV, the tag or the ciphertext', () => {
    const sealed = box.seal('a secret worth keeping');
    for (const index of [1, 2, 3]) {
      expect(() => box.open(withPart(sealed, index, flipFirstBit)), `part ${index}`).toThrow(SecretBoxError);
    }
    // a shortened ciphertext and swapped parts of two sealed values fail too
    expect(() => box.open(withPart(sealed, 3, (c) => c.subarray(1)))).toThrow(SecretBoxError);
    const other = box.seal('another secret worth keeping').split('.');
    const mixed = sealed.split('.');
    mixed[3] = other[3]!;
    expect(() => box.open(mixed.join('.'))).toThrow(SecretBoxError);
  });

  it('refuses a value sealed with another key', () => {
    const sealed = createSecretBox(randomBytes(32)).seal('not yours');
    expect(() => box.open(sealed)).toThrow(/changed or sealed with another key/);
  });

  it('refuses malformed values and unknown versions', () => {
    const sealed = box.seal('text');
    for (const bad of [
      '',
      'text',
      sealed.replace(/^v1/, 'v2'),
      sealed.replace(/^v1\./, ''),
      `${sealed}.extra`,
      sealed.replace(/\.[^.]+\./, '.AAAA.'),
      `${sealed.slice(0, -2)}+/`,
    ]) {
      expect(() => box.open(bad), bad).toThrow(SecretBoxError);
    }
  });

  it('takes exactly 32-byte keys', () => {
    expect(() => createSecretBox(randomBytes(16))).toThrow(/32 bytes/);
    expect(() => createSecretBox(randomBytes(33))).toThrow(/32 bytes/);
  });
});

describe('secret keys', () => {
  const dir = mkdtempSync(join(tmpdir(), 'secret-box-'));
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it('parse from standard and url-safe base64 of 32 bytes only', () => {
    const bytes = randomBytes(32);
    expect(parseSecretKey(bytes.toString('base64'))).toEqual(bytes);
    expect(parseSecretKey(`${bytes.toString('base64url')}\n`)).toEqual(bytes);
    expect(parseSecretKey(generateSecretKey())).toHaveLength(32);
    expect(() => parseSecretKey(randomBytes(31).toString('base64'))).toThrow(/32 bytes, not 31/);
    expect(() => parseSecretKey('not base64 at all!')).toThrow(/base64/);
    expect(() => parseSecretKey('')).toThrow(/base64/);
  });

  it('prefer the variable, then the file', () => {
    const file = join(dir, 'given.key');
    const fromFile = randomBytes(32);
    writeFileSync(file, fromFile.toString('base64'));
    const fromVariable = randomBytes(32);
    expect(resolveSecretKey({ key: fromVariable.toString('base64'), file, production: true })).toEqual(
      fromVariable,
    );
    expect(resolveSecretKey({ file, production: true })).toEqual(fromFile);
  });

  it('generate a missing file outside production (0600) and reuse it afterwards', () => {
    const file = join(dir, 'nested', 'keys', 'secret.key');
    const generated = resolveSecretKey({ file, production: false });
    expect(generated).toHaveLength(32);
    expect(statSync(file).mode & 0o777).toBe(0o600);
    expect(parseSecretKey(readFileSync(file, 'utf8'))).toEqual(generated);
    expect(resolveSecretKey({ file, production: false })).toEqual(generated);
    // so what one start sealed, the next one opens
    const sealed = createSecretBox(generated).seal('kept across restarts');
    expect(createSecretBox(resolveSecretKey({ file, production: false })).open(sealed)).toBe(
      'kept across restarts',
    );
  });

  it('refuse to start in production without a key, and name a bad key file', () => {
    expect(() => resolveSecretKey({ file: join(dir, 'absent.key'), production: true })).toThrow(
      /must be set in production/,
    );
    const bad = join(dir, 'bad.key');
    writeFileSync(bad, 'short');
    expect(() => resolveSecretKey({ file: bad, production: false })).toThrow(/bad\.key must be the base64/);
    expect(() => resolveSecretKey({ key: 'c2hvcnQ=', file: bad, production: false })).toThrow(/32 bytes/);
  });
});

describe('rememberingOpen', () => {
  it('opens each sealed value once, answers the same text, and still refuses tampered values', () => {
    const box = createSecretBox(randomBytes(SECRET_KEY_BYTES));
    let opens = 0;
    const counting: SecretBox = { seal: box.seal, open: (sealed) => (opens++, box.open(sealed)) };
    const remembering = rememberingOpen(counting, 2);
    const a = box.seal('secret a');
    const b = box.seal('secret b');
    expect([remembering.open(a), remembering.open(a), remembering.open(b)]).toEqual([
      'secret a',
      'secret a',
      'secret b',
    ]);
    expect(opens).toBe(2);
    remembering.open(box.seal('secret c')); // over the bound: starts afresh
    remembering.open(a);
    expect(opens).toBe(4);
    expect(() => remembering.open(`${a.slice(0, -2)}AA`)).toThrow(SecretBoxError);
  });
});
