import { createApiClient, refreshTokens } from './api-client';
import { createPortalSessionStore } from './portal-session-store';
import { isPortalPath, takePortalToken } from './portal-token';
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

/** Whether this page is the endpoint portal (`/portal/{sessionId}`, docs/portal.md), not the console. */
export const isPortalPage = typeof window !== 'undefined' && isPortalPath(window.location.pathname);

/**
 * The endpoint portal's session: its one token, from the URL fragment (or this tab's storage after
 * a reload). Null on the console's pages.
 */
export const portalSessionStore = isPortalPage
  ? createPortalSessionStore(
      takePortalToken(window.location, browserSessionStorage(), () =>
        window.history.replaceState(null, '', window.location.pathname + window.location.search),
      ),
    )
  : null;

/**
 * The API client every feature's fetchers go through: the operator's session on the console, the
 * portal session's token on the portal, so the portal reads and acts through the same data layer.
 */
export const api = createApiClient(portalSessionStore ?? sessionStore);
