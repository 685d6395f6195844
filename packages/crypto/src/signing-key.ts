import { existsSync, linkSync, mkdirSync, readFileSync, unlinkSync, writeFileSync } from 'node:fs';
import { dirname } from 'node:path';
import { generateKeyPairSync, randomBytes } from 'node:crypto';
import { calculateJwkThumbprint, exportJWK, importPKCS8, type CryptoKey, type JWK } from 'jose';

// The API signs its tokens and the dispatcher its webhook bearer tokens (docs/dispatcher.md#the-webhook-token) with this one
// key, so both read it through this module and the JWKS the API publishes verifies either.

/** The RS256 signing key, its public JWK and key id. */
export interface SigningKey {
  kid: string;
  privateKey: CryptoKey;
  publicJwk: JWK;
}

/** A new RSA-2048 private key as PKCS#8 PEM. */
export function generatePrivateKeyPem(): string {
  const { privateKey } = generateKeyPairSync('rsa', { modulusLength: 2048 });
  return privateKey.export({ type: 'pkcs8', format: 'pem' }).toString();
}

/**
 * The private key PEM from the variable, else from the file; a missing file is created with a new
 * key unless in production, where a key must be supplied.
 */
export function resolvePrivateKeyPem(options: { pem?: string; file: string; production: boolean }): string {
  if (options.pem) return options.pem.replace(/\\n/g, '\n');
  if (existsSync(options.file)) return readFileSync(options.file, 'utf8');
  if (options.production)
    throw new Error('JWT_PRIVATE_KEY or JWT_PRIVATE_KEY_FILE must be set in production');
  mkdirSync(dirname(options.file), { recursive: true });
  const pem = generatePrivateKeyPem();
  // API and dispatcher may start together on a fresh data folder: the key is written whole to a
  // file of our own and linked into place, which fails if another process got there first; then
  // its key wins, so both sign with the same one and nobody reads a half-written file.
  const temporary = `${options.file}.${process.pid}.${randomBytes(4).toString('hex')}`;
  writeFileSync(temporary, pem, { mode: 0o600 });
  try {
    linkSync(temporary, options.file);
    return pem;
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
    return readFileSync(options.file, 'utf8');
  } finally {
    unlinkSync(temporary);
  }
}

/** Loads a PKCS#8 PEM as the signing key; `kid` is the public key's RFC 7638 thumbprint. */
export async function loadSigningKey(pem: string): Promise<SigningKey> {
  const privateKey = await importPKCS8(pem, 'RS256', { extractable: true });
  const full = await exportJWK(privateKey);
  const publicJwk: JWK = { kty: full.kty, n: full.n, e: full.e };
  const kid = await calculateJwkThumbprint(publicJwk);
  return { kid, privateKey, publicJwk: { ...publicJwk, kid, alg: 'RS256', use: 'sig' } };
}
