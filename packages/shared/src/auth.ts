import { z } from 'zod';
import { MfaChallenge } from './mfa';

export const LoginRequest = z
  .strictObject({
    email: z.string().trim().min(1).max(254),
    password: z.string().min(1).max(200),
    skipMultiFactorAuthentication: z.boolean().optional().meta({
      description:
        'Skip the second factor. Honoured only for accounts whose policy allows it (integration accounts); ignored otherwise.',
    }),
  })
  .meta({ id: 'LoginRequest' });
export type LoginRequest = z.infer<typeof LoginRequest>;

export const RefreshRequest = z
  .strictObject({ refreshToken: z.string().min(1).max(4096) })
  .meta({ id: 'RefreshRequest' });
export type RefreshRequest = z.infer<typeof RefreshRequest>;

export const TokenResponse = z
  .object({
    accessToken: z.string().meta({ description: 'RS256 JWT, valid 15 minutes by default.' }),
    refreshToken: z
      .string()
      .meta({ description: 'One-time refresh token (a JWT), valid 30 days by default.' }),
  })
  .meta({ id: 'TokenResponse' });
export type TokenResponse = z.infer<typeof TokenResponse>;

/** What a login answers: tokens, or (for an account with multi-factor authentication) a challenge. */
export const LoginResponse = z.union([TokenResponse, MfaChallenge]).meta({ id: 'LoginResponse' });
export type LoginResponse = z.infer<typeof LoginResponse>;
