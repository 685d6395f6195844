import { LoginRequest, MfaLoginRequest, RefreshRequest, type LoginResponse } from '@platform/shared';
import { z } from 'zod';
import type { AppDeps } from '../deps';
import { login, loginWithMfa, refresh } from '../features/auth/auth-service';
import { defineRoute } from '../http/route';

/** Gen1 names everything in snake_case; the rules of each field are the Gen2 ones. */
const Gen1LoginRequest = z.strictObject({
  email: LoginRequest.shape.email,
  password: LoginRequest.shape.password,
  skip_multi_factor_authentication: z.boolean().optional(),
});
const Gen1MfaLoginRequest = z.strictObject({
  mfa_token: MfaLoginRequest.shape.mfaToken,
  code: MfaLoginRequest.shape.code,
});
const Gen1RefreshRequest = z.strictObject({ refresh_token: RefreshRequest.shape.refreshToken });

/** What a Gen1 login or refresh answers: the tokens, or the second-factor challenge. */
export type Gen1LoginResponse =
  | { access_token: string; refresh_token: string; token_type: 'Bearer'; expires_in: number }
  | { mfa_required: true; mfa_token: string };

/** A Gen2 login answer in Gen1 terms; `expires_in` is the access token's lifetime in seconds. */
function gen1Answer(deps: AppDeps, response: LoginResponse): Gen1LoginResponse {
  if ('mfaRequired' in response) return { mfa_required: true, mfa_token: response.mfaToken };
  return {
    access_token: response.accessToken,
    refresh_token: response.refreshToken,
    token_type: 'Bearer',
    expires_in: Math.floor(deps.config.ACCESS_TOKEN_TTL / 1000),
  };
}

/**
 * Gen1 login, second factor and refresh. These are the Gen2 operations themselves (the same
 * password check, rate limits, MFA and one-time refresh tokens with family revocation); the Gen1
 * router hands them the Gen1 token service, so the tokens they issue and accept are Gen1's.
 */
export const gen1AuthRoutes = [
  defineRoute({
    method: 'post',
    path: '/auth/login',
    summary: 'Gen1: log in with email and password',
    tags: ['Gen1'],
    auth: 'public',
    body: Gen1LoginRequest,
    errors: [429],
    handler: async ({ deps, body, ctx }) =>
      gen1Answer(
        deps,
        await login(
          deps,
          {
            email: body.email,
            password: body.password,
            skipMultiFactorAuthentication: body.skip_multi_factor_authentication,
          },
          ctx.ip,
        ),
      ),
  }),
  defineRoute({
    method: 'post',
    path: '/auth/login/mfa',
    summary: 'Gen1: complete a login with the second factor',
    tags: ['Gen1'],
    auth: 'public',
    body: Gen1MfaLoginRequest,
    errors: [401, 429],
    handler: async ({ deps, body }) =>
      gen1Answer(deps, await loginWithMfa(deps, { mfaToken: body.mfa_token, code: body.code })),
  }),
  defineRoute({
    method: 'post',
    path: '/auth/refresh',
    summary: 'Gen1: exchange a one-time refresh token for new tokens',
    tags: ['Gen1'],
    auth: 'public',
    body: Gen1RefreshRequest,
    errors: [401],
    handler: async ({ deps, body }) => gen1Answer(deps, await refresh(deps, body.refresh_token)),
  }),
];
