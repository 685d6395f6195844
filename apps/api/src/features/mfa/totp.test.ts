import { describe, expect, it } from 'vitest';
import {
  base32Decode,
  base32Encode,
  generateTotpSecret,
  hotp,
  otpauthUri,
  totp,
  totpStep,
  verifyTotp,
  type TotpAlgorithm,
} from './totp';

// the seeds of RFC 6238 appendix B, one per algorithm
const SEEDS: Record<TotpAlgorithm, Buffer> = {
  sha1: Buffer.from('12345678901234567890'),
  sha256: Buffer.from('12345678901234567890123456789012'),
  sha512: Buffer.from('1234567890123456789012345678901234567890123456789012345678901234'),
};

describe('RFC 6238 appendix B test vectors (8 digits)', () => {
  const vectors: [seconds: number, sha1: string, sha256: string, sha512: string][] = [
    [59, '94287082', '46119246', '90693936'],
    [1111111109, '07081804', '68084774', '25091201'],
    [1111111111, '14050471', '67062674', '99943326'],
    [1234567890, '89005924', '91819424', '93441116'],
    [2000000000, '69279037', '90698825', '38618901'],
    [20000000000, '65353130', '77737706', '47863826'],
  ];
  it.each(vectors)('at %i s', (seconds, sha1, sha256, sha512) => {
    const time = new Date(seconds * 1000);
    expect(totp(SEEDS.sha1, time, { digits: 8 })).toBe(sha1);
    expect(totp(SEEDS.sha256, time, { digits: 8, algorithm: 'sha256' })).toBe(sha256);
    expect(totp(SEEDS.sha512, time, { digits: 8, algorithm: 'sha512' })).toBe(sha512);
  });

  it('uses 30-second steps from the epoch', () => {
    expect(totpStep(new Date(59_000))).toBe(1);
    expect(totpStep(new Date(1111111109_000))).toBe(0x23523ec);
    expect(totpStep(new Date(20000000000_000))).toBe(0x27bc86aa);
  });
});

describe('RFC 4226 appendix D test vectors (HOTP, 6 digits)', () => {
  const values = [
    '755224',
    '287082',
    '359152',
    '969429',
    '338314',
    '254676',
    '287922',
    '162583',
    '399871',
    '520489',
  ];
  it.each(values.map((value, counter) => [counter, value] as const))('counter %i', (counter, value) => {
    expect(hotp(SEEDS.sha1, counter)).toBe(value);
  });
});

describe('base32 (RFC 4648 section 10 vectors)', () => {
  const vectors: [string, string][] = [
    ['', ''],
    ['f', 'MY'],
    ['fo', 'MZXQ'],
    ['foo', 'MZXW6'],
    ['foob', 'MZXW6YQ'],
    ['fooba', 'MZXW6YTB'],
    ['foobar', 'MZXW6YTBOI'],
  ];
  it.each(vectors)('%j ↔ %s', (text, encoded) => {
    expect(base32Encode(Buffer.from(text))).toBe(encoded);
    expect(base32Decode(encoded).toString()).toBe(text);
    expect(base32Decode(encoded.toLowerCase()).toString()).toBe(text);
  });

  it('refuses characters outside the alphabet', () => {
    expect(() => base32Decode('MZXW1')).toThrow(/not a base32 character/);
  });

  it('makes 160-bit secrets, different every time', () => {
    const secret = generateTotpSecret();
    expect(secret).toMatch(/^[A-Z2-7]{32}$/);
    expect(base32Decode(secret)).toHaveLength(20);
    expect(generateTotpSecret()).not.toBe(secret);
  });
});

describe('verifyTotp', () => {
  const secret = base32Encode(SEEDS.sha1);
  const now = new Date(1111111111_000);
  const codeAt = (offsetSteps: number) => totp(SEEDS.sha1, new Date(now.getTime() + offsetSteps * 30_000));
  const step = totpStep(now);

  it('accepts the current code and those one step either side, answering their step', () => {
    expect(verifyTotp(secret, codeAt(0), now)).toBe(step);
    expect(verifyTotp(secret, codeAt(-1), now)).toBe(step - 1);
    expect(verifyTotp(secret, codeAt(1), now)).toBe(step + 1);
  });

  it('refuses codes two steps away, wrong codes and codes of another length', () => {
    expect(verifyTotp(secret, codeAt(-2), now)).toBeUndefined();
    expect(verifyTotp(secret, codeAt(2), now)).toBeUndefined();
    const wrong = String((Number(codeAt(0)) + 1) % 1_000_000).padStart(6, '0');
    expect(verifyTotp(secret, wrong, now)).toBeUndefined();
    expect(verifyTotp(secret, codeAt(0).slice(0, 5), now)).toBeUndefined();
    expect(verifyTotp(secret, `${codeAt(0)}0`, now)).toBeUndefined();
    expect(verifyTotp(secret, '', now)).toBeUndefined();
    expect(verifyTotp(secret, 'äöüßéè', now)).toBeUndefined();
  });

  it('refuses steps at or before the last one used, so a code works once', () => {
    expect(verifyTotp(secret, codeAt(0), now, step)).toBeUndefined();
    expect(verifyTotp(secret, codeAt(-1), now, step)).toBeUndefined();
    expect(verifyTotp(secret, codeAt(1), now, step)).toBe(step + 1);
    expect(verifyTotp(secret, codeAt(0), now, step - 1)).toBe(step);
  });
});

describe('otpauthUri', () => {
  it('names issuer and account and carries the parameters authenticator apps read', () => {
    const uri = otpauthUri({
      secret: 'JBSWY3DPEHPK3PXP',
      issuer: 'Property Platform',
      accountName: 'a+b@example.com',
    });
    expect(uri).toBe(
      'otpauth://totp/Property%20Platform:a%2Bb%40example.com?secret=JBSWY3DPEHPK3PXP&issuer=Property%20Platform' +
        '&algorithm=SHA1&digits=6&period=30',
    );
  });
});
