import {
  LoginRequest,
  LoginResponse,
  MfaLoginRequest,
  RefreshRequest,
  TokenResponse,
} from '@platform/shared';
import { defineRoute } from '../../http/route';
import { login, loginWithMfa, refresh } from './auth-service';

export const authRoutes = [
  defineRoute({
    method: 'post',
    path: '/api/auth/login',
    summary: 'Log in with email and password',
    description:
      'Answers an access token (15 min) and a one-time refresh token (30 days). For an account with multi-factor ' +
      'authentication it answers `{ mfaRequired: true, mfaToken }` instead: complete the login with ' +
      'POST /api/auth/login/mfa. A wrong email or password is a 400 that does not say which. Rate limited per ' +
      'email and per client address (429 with Retry-After).',
    tags: ['Authentication'],
    auth: 'public',
    body: LoginRequest,
    response: { description: 'Tokens, or the challenge for the second factor', schema: LoginResponse },
    errors: [429],
    handler: ({ deps, body, ctx }) => login(deps, body, ctx.ip),
  }),
  defineRoute({
    method: 'post',
    path: '/api/auth/login/mfa',
    summary: 'Complete a login with the second factor',
    description:
      'Takes the `mfaToken` of the login (single use, 5 minutes) and a code of the authenticator app or an unused ' +
      'recovery code (which is spent). A wrong code is a 400; a bad, used or expired mfaToken a 401. Wrong codes ' +
      'are rate limited per account (429 with Retry-After).',
    tags: ['Authentication'],
    auth: 'public',
    body: MfaLoginRequest,
    response: { description: 'Tokens', schema: TokenResponse },
    errors: [401, 429],
    handler: ({ deps, body }) => loginWithMfa(deps, body),
  }),
  defineRoute({
    method: 'post',
    path: '/api/auth/refresh',
    summary: 'Exchange a refresh token for new tokens',
    description:
      'Each refresh token works once. Presenting a used one answers 401 and revokes every token of its login.',
    tags: ['Authentication'],
    auth: 'public',
    body: RefreshRequest,
    response: { description: 'New tokens', schema: TokenResponse },
    errors: [401],
    handler: ({ deps, body }) => refresh(deps, body.refreshToken),
  }),
];
