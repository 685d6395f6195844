import { createHmac, randomBytes, timingSafeEqual } from 'node:crypto';

/** Time-based one-time passwords (RFC 6238) over HOTP (RFC 4226), as authenticator apps do them. */

export const TOTP_STEP_SECONDS = 30;
export const TOTP_DIGITS = 6;
/** Steps accepted either side of the current one: clocks of phone and server may differ a little. */
export const TOTP_WINDOW = 1;
/** 160 bits, the secret length RFC 4226 recommends for HMAC-SHA1. */
const SECRET_BYTES = 20;

export type TotpAlgorithm = 'sha1' | 'sha256' | 'sha512';

const BASE32_ALPHABET = 'ABCDEFGHIJKLMNOPQRSTUVWXYZ234567';

/** RFC 4648 base32 without padding, the form authenticator apps take secrets in. */
export function base32Encode(bytes: Uint8Array): string {
  let bits = 0;
  let value = 0;
  let text = '';
  for (const byte of bytes) {
    value = (value << 8) | byte;
    bits += 8;
    while (bits >= 5) {
      text += BASE32_ALPHABET[(value >>> (bits - 5)) & 31];
      bits -= 5;
    }
  }
  if (bits > 0) text += BASE32_ALPHABET[(value << (5 - bits)) & 31];
  return text;
}

/** The bytes of RFC 4648 base32 text (case-insensitive, padding optional); throws on other characters. */
export function base32Decode(text: string): Buffer {
  const clean = text.toUpperCase().replace(/=+$/, '');
  const bytes: number[] = [];
  let bits = 0;
  let value = 0;
  for (const char of clean) {
    const index = BASE32_ALPHABET.indexOf(char);
    if (index < 0) throw new Error(`"${char}" is not a base32 character`);
    value = ((value << 5) | index) & 0xffff;
    bits += 5;
    if (bits >= 8) {
      bytes.push((value >>> (bits - 8)) & 0xff);
      bits -= 8;
    }
  }
  return Buffer.from(bytes);
}

/** A new random TOTP secret, base32. */
export function generateTotpSecret(): string {
  return base32Encode(randomBytes(SECRET_BYTES));
}

/** The HOTP value of `counter` (RFC 4226 section 5.3: dynamic truncation), `digits` long. */
export function hotp(
  secret: Uint8Array,
  counter: number,
  digits = TOTP_DIGITS,
  algorithm: TotpAlgorithm = 'sha1',
): string {
  const message = Buffer.alloc(8);
  message.writeBigUInt64BE(BigInt(counter));
  const mac = createHmac(algorithm, secret).update(message).digest();
  const offset = mac[mac.length - 1]! & 0x0f;
  const binary = mac.readUInt32BE(offset) & 0x7fffffff;
  return String(binary % 10 ** digits).padStart(digits, '0');
}

/** The time step of `time`: whole 30-second periods since the Unix epoch. */
export function totpStep(time: Date, stepSeconds = TOTP_STEP_SECONDS): number {
  return Math.floor(time.getTime() / 1000 / stepSeconds);
}

/** The TOTP code of `secret` at `time`. */
export function totp(
  secret: Uint8Array,
  time: Date,
  options: { digits?: number; algorithm?: TotpAlgorithm } = {},
): string {
  return hotp(secret, totpStep(time), options.digits, options.algorithm);
}

/**
 * The time step `code` is valid for at `now` (within ±TOTP_WINDOW steps), or undefined. Steps at
 * or before `afterStep` do not count: a code, once accepted, is not accepted again (RFC 6238
 * section 5.2). Every candidate is compared in constant time, and all of them always, so the
 * response time does not tell how close a guess was.
 */
export function verifyTotp(
  secretBase32: string,
  code: string,
  now: Date,
  afterStep: number | null = null,
): number | undefined {
  const secret = base32Decode(secretBase32);
  // a fixed-length buffer, so timingSafeEqual compares whatever the caller typed
  const given = Buffer.alloc(TOTP_DIGITS);
  given.write(code.slice(0, TOTP_DIGITS), 'latin1');
  const current = totpStep(now);
  let matched: number | undefined;
  for (let step = current - TOTP_WINDOW; step <= current + TOTP_WINDOW; step++) {
    const expected = Buffer.from(hotp(secret, step));
    const equal = timingSafeEqual(expected, given) && code.length === TOTP_DIGITS;
    if (equal && (afterStep === null || step > afterStep) && matched === undefined) matched = step;
  }
  return matched;
}

/** The `otpauth://` URI an authenticator app scans (as a QR code) to add the account. */
export function otpauthUri(options: { secret: string; issuer: string; accountName: string }): string {
  const label = `${encodeURIComponent(options.issuer)}:${encodeURIComponent(options.accountName)}`;
  const query = new URLSearchParams({
    secret: options.secret,
    issuer: options.issuer,
    algorithm: 'SHA1',
    digits: String(TOTP_DIGITS),
    period: String(TOTP_STEP_SECONDS),
  });
  return `otpauth://totp/${label}?${query.toString().replace(/\+/g, '%20')}`;
}
