import { createApiClient, refreshTokens } from './api-client';
import { createSessionStore } from './session';

function browserSessionStorage(): Storage | undefined {
  try {
    return window.sessionStorage;
  } catch {
    return undefined; // storage disabled: the session then lives in memory only
  }
}

/** The operator's session: tokens in memory, mirrored to sessionStorage (see docs/admin.md). */
export const sessionStore = createSessionStore({
  refresh: refreshTokens(),
  storage: browserSessionStorage(),
});

/** The console's API client; every feature's fetchers go through it. */
export const api = createApiClient(sessionStore);
