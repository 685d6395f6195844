import { createCipheriv, createDecipheriv, randomBytes } from 'node:crypto';
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { dirname } from 'node:path';

/**
 * Encrypts small secrets kept at rest (MFA secrets, webhook target credentials) with AES-256-GCM.
 * A sealed value reads `v1.<iv>.<tag>.<ciphertext>`, each part base64url: the version lets a
 * later format or key live next to this one, and GCM's tag makes any change to a sealed value
 * (or opening it with another key) fail instead of yielding garbage.
 */
export interface SecretBox {
  /** The sealed form of `text`; a fresh IV every time, so equal texts seal differently. */
  seal(text: string): string;
  /** The text of a value `seal` produced with the same key; throws SecretBoxError otherwise. */
  open(sealed: string): string;
}

/** A sealed value that is malformed, was changed, or was sealed with another key. */
export class SecretBoxError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'SecretBoxError';
  }
}

export const SECRET_KEY_BYTES = 32;
const VERSION = 'v1';
const IV_BYTES = 12;
const TAG_BYTES = 16;
// the version is authenticated too, so a v1 value cannot be passed off as a later format
const ASSOCIATED_DATA = Buffer.from(VERSION);
const BASE64URL = /^[A-Za-z0-9_-]*$/;

/** A box sealing with `key`, which must be exactly 32 bytes. */
export function createSecretBox(key: Uint8Array): SecretBox {
  if (key.length !== SECRET_KEY_BYTES) {
    throw new Error(`The secret encryption key must be ${SECRET_KEY_BYTES} bytes, not ${key.length}`);
  }
  const keyBytes = Buffer.from(key);
  return {
    seal(text) {
      const iv = randomBytes(IV_BYTES);
      const cipher = createCipheriv('aes-256-gcm', keyBytes, iv, { authTagLength: TAG_BYTES });
      cipher.setAAD(ASSOCIATED_DATA);
      const ciphertext = Buffer.concat([cipher.update(text, 'utf8'), cipher.final()]);
      return [VERSION, iv, cipher.getAuthTag(), ciphertext]
        .map((part) => (typeof part === 'string' ? part : part.toString('base64url')))
        .join('.');
    },
    open(sealed) {
      const parts = sealed.split('.');
      if (parts.length !== 4 || parts[0] !== VERSION) {
        throw new SecretBoxError(`Not a sealed secret of version ${VERSION}`);
      }
      if (!parts.every((part) => BASE64URL.test(part))) {
        throw new SecretBoxError('A sealed secret must be base64url');
      }
      const [iv, tag, ciphertext] = parts.slice(1).map((part) => Buffer.from(part, 'base64url'));
      if (iv!.length !== IV_BYTES || tag!.length !== TAG_BYTES) {
        throw new SecretBoxError('The sealed secret is malformed');
      }
      try {
        const decipher = createDecipheriv('aes-256-gcm', keyBytes, iv!, { authTagLength: TAG_BYTES });
        decipher.setAAD(ASSOCIATED_DATA);
        decipher.setAuthTag(tag!);
        return Buffer.concat([decipher.update(ciphertext!), decipher.final()]).toString('utf8');
      } catch {
        throw new SecretBoxError('The sealed secret was changed or sealed with another key');
      }
    },
  };
}

/** The 32-byte key written as base64 (standard or url-safe); throws saying what is wrong. */
export function parseSecretKey(text: string): Buffer {
  const trimmed = text.trim();
  if (!/^[A-Za-z0-9+/_-]+={0,2}$/.test(trimmed)) throw new Error('must be base64');
  const key = Buffer.from(trimmed.replace(/-/g, '+').replace(/_/g, '/'), 'base64');
  if (key.length !== SECRET_KEY_BYTES) {
    throw new Error(`must be the base64 of ${SECRET_KEY_BYTES} bytes, not ${key.length}`);
  }
  return key;
}

/** A new random key, base64. */
export function generateSecretKey(): string {
  return randomBytes(SECRET_KEY_BYTES).toString('base64');
}

/**
 * The secret encryption key from the variable, else from the file; a missing file is created
 * with a new key unless in production, where a key must be supplied (a generated one would make
 * every secret sealed by another replica, or before a redeploy, unreadable).
 */
export function resolveSecretKey(options: { key?: string; file: string; production: boolean }): Buffer {
  if (options.key) return parseSecretKey(options.key);
  if (existsSync(options.file)) {
    try {
      return parseSecretKey(readFileSync(options.file, 'utf8'));
    } catch (error) {
      throw new Error(`The secret key file ${options.file} ${(error as Error).message}`);
    }
  }
  if (options.production) {
    throw new Error('SECRET_ENCRYPTION_KEY or SECRET_ENCRYPTION_KEY_FILE must be set in production');
  }
  mkdirSync(dirname(options.file), { recursive: true });
  const key = generateSecretKey();
  // 'wx': if another process created the file meanwhile, keep (and read) its key rather than ours
  try {
    writeFileSync(options.file, `${key}\n`, { mode: 0o600, flag: 'wx' });
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
    return parseSecretKey(readFileSync(options.file, 'utf8'));
  }
  return parseSecretKey(key);
}

/**
 * A box whose `open` remembers what it opened (up to `max` sealed values, then it starts afresh),
 * for a process that opens the same few secrets again and again: the dispatcher opens its
 * registrations' signing secrets for every delivery. Sealed values carry a random IV, so a
 * rotated secret is a new key here and the old entry is simply never asked for again.
 */
export function rememberingOpen(box: SecretBox, max = 10_000): SecretBox {
  const opened = new Map<string, string>();
  return {
    seal: (text) => box.seal(text),
    open(sealed) {
      let text = opened.get(sealed);
      if (text === undefined) {
        text = box.open(sealed);
        if (opened.size >= max) opened.clear();
        opened.set(sealed, text);
      }
      return text;
    },
  };
}
