import { z } from 'zod';

/**
 * A second-factor code as typed: blanks and dashes go (apps show `123 456`, recovery codes are
 * printed `ABCD-EFGH-…`), letters are upper-cased.
 */
export function normalizeMfaCode(code: string): string {
  return code.replace(/[\s-]/g, '').toUpperCase();
}

/** A TOTP code: six digits. */
export const TOTP_CODE = /^\d{6}$/;
/** A recovery code: 16 base32 characters (80 random bits). */
export const RECOVERY_CODE = /^[A-Z2-7]{16}$/;

const code = (pattern: RegExp, message: string, description: string) =>
  z
    .string()
    .max(64)
    .transform(normalizeMfaCode)
    .pipe(z.string().regex(pattern, message))
    .meta({ description });

const totpCode = code(
  TOTP_CODE,
  'must be the 6-digit code of the authenticator app',
  'The current 6-digit code of the authenticator app.',
);
const totpOrRecoveryCode = code(
  /^(\d{6}|[A-Z2-7]{16})$/,
  'must be the 6-digit code of the authenticator app or a recovery code',
  'The current 6-digit code of the authenticator app, or an unused recovery code (spent by this call).',
);

export const MfaEnrolment = z
  .object({
    secret: z.string().meta({ description: 'The TOTP secret, base32 (to type into an authenticator app).' }),
    otpauthUri: z
      .string()
      .meta({ description: 'The `otpauth://totp/…` URI to show as a QR code for an authenticator app.' }),
  })
  .meta({ id: 'MfaEnrolment' });
export type MfaEnrolment = z.infer<typeof MfaEnrolment>;

export const MfaConfirmRequest = z.strictObject({ code: totpCode }).meta({ id: 'MfaConfirmRequest' });
export type MfaConfirmRequest = z.infer<typeof MfaConfirmRequest>;

export const MfaRecoveryCodes = z
  .object({
    recoveryCodes: z.array(z.string()).meta({
      description:
        'Ten one-time codes that stand in for the authenticator app. Shown once; store them safely.',
    }),
  })
  .meta({ id: 'MfaRecoveryCodes' });
export type MfaRecoveryCodes = z.infer<typeof MfaRecoveryCodes>;

export const MfaDisableRequest = z
  .strictObject({ password: z.string().min(1).max(200), code: totpOrRecoveryCode })
  .meta({ id: 'MfaDisableRequest' });
export type MfaDisableRequest = z.infer<typeof MfaDisableRequest>;

export const MfaLoginRequest = z
  .strictObject({
    mfaToken: z.string().min(1).max(4096).meta({ description: 'The `mfaToken` the login answered.' }),
    code: totpOrRecoveryCode,
  })
  .meta({ id: 'MfaLoginRequest' });
export type MfaLoginRequest = z.infer<typeof MfaLoginRequest>;

export const MfaChallenge = z
  .object({
    mfaRequired: z.literal(true),
    mfaToken: z.string().meta({
      description: 'Single-use token (5 minutes) for POST /api/auth/login/mfa; it opens nothing else.',
    }),
  })
  .meta({ id: 'MfaChallenge' });
export type MfaChallenge = z.infer<typeof MfaChallenge>;
