import { z } from 'zod';

export const LoginRequest = z
  .strictObject({
    email: z.string().trim().min(1).max(254),
    password: z.string().min(1).max(200),
    skipMultiFactorAuthentication: z.boolean().optional(),
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
