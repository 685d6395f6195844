import { z } from 'zod';

/** An email as typed: trimmed, matched case-insensitively; only its shape is checked here. */
const email = z
  .string()
  .trim()
  .max(254)
  .regex(/^[^\s@]+@[^\s@]+$/, 'must be an email address');

export const PasswordRecoveryRequest = z
  .strictObject({ email: email.meta({ description: 'Email of the account to recover.' }) })
  .meta({ id: 'PasswordRecoveryRequest' });
export type PasswordRecoveryRequest = z.infer<typeof PasswordRecoveryRequest>;

export const PasswordRecoveryResponseDto = z
  .object({
    message: z.string().meta({
      description: 'The same text whether or not an account has this email, so it reveals nothing.',
    }),
  })
  .meta({ id: 'PasswordRecoveryResponseDto' });
export type PasswordRecoveryResponseDto = z.infer<typeof PasswordRecoveryResponseDto>;

export const PasswordChangeRecoveryCodeRequest = z
  .strictObject({
    email,
    password: z.string().min(1).max(200).meta({ description: 'The new password.' }),
    recoveryCode: z.string().trim().min(1).max(64).meta({
      description: 'The code from the recovery mail; case, blanks and hyphens do not matter.',
    }),
  })
  .meta({ id: 'PasswordChangeRecoveryCodeRequest' });
export type PasswordChangeRecoveryCodeRequest = z.infer<typeof PasswordChangeRecoveryCodeRequest>;

export const PasswordChangeRecoveryCodeResponseDto = z
  .object({ message: z.string() })
  .meta({ id: 'PasswordChangeRecoveryCodeResponseDto' });
export type PasswordChangeRecoveryCodeResponseDto = z.infer<typeof PasswordChangeRecoveryCodeResponseDto>;

export const UnblockRecoveryCodeRequest = z
  .strictObject({ email: email.meta({ description: 'Email of the account whose recovery to unblock.' }) })
  .meta({ id: 'UnblockRecoveryCodeRequest' });
export type UnblockRecoveryCodeRequest = z.infer<typeof UnblockRecoveryCodeRequest>;

export const UnblockRecoveryCodeResponse = z
  .object({
    email: z.string().meta({ description: 'Email of the account, as stored.' }),
    unblocked: z.literal(true),
  })
  .meta({ id: 'UnblockRecoveryCodeResponseDto' });
export type UnblockRecoveryCodeResponse = z.infer<typeof UnblockRecoveryCodeResponse>;

export const AccountActivationMessageResponse = z
  .object({ sent: z.literal(true) })
  .meta({ id: 'AccountActivationMessageResponse' });
export type AccountActivationMessageResponse = z.infer<typeof AccountActivationMessageResponse>;
