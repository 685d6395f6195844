import type { LoginRequest, LoginResponse, MfaLoginRequest, TokenResponse } from '@platform/shared';
import { api } from '../../../lib/api';

/** POST /api/auth/login: tokens, or the challenge of an account with a second factor. */
export function login(request: LoginRequest): Promise<LoginResponse> {
  return api.public<LoginResponse>('/api/auth/login', { method: 'POST', json: request });
}

/** POST /api/auth/login/mfa: completes a login with the authenticator or a recovery code. */
export function loginWithMfa(request: MfaLoginRequest): Promise<TokenResponse> {
  return api.public<TokenResponse>('/api/auth/login/mfa', { method: 'POST', json: request });
}
