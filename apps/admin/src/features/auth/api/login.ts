import type { LoginRequest, TokenResponse } from '@platform/shared';
import { apiFetch } from '../../../lib/api-client';

/** Exchanges email and password for tokens. */
export function login(request: LoginRequest): Promise<TokenResponse> {
  return apiFetch<TokenResponse>('/api/auth/login', { method: 'POST', json: request });
}
