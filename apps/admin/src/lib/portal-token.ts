/**
 * The endpoint portal's token (docs/portal.md#embedding): handed over in the URL fragment
 * (`/portal/{sessionId}#token=…`, never sent to a server), kept in the tab's sessionStorage under
 * the session id so a reload keeps it, and taken out of the address bar.
 */

/** The session id of a portal pathname (`/portal/{uuid}`), or undefined. */
export function portalSessionIdOf(pathname: string): string | undefined {
  const match = /^\/portal\/([0-9a-fA-F-]{36})\/?$/.exec(pathname);
  return match?.[1]?.toLowerCase();
}

/** Whether `pathname` is the portal's, not the console's. */
export const isPortalPath = (pathname: string): boolean =>
  pathname === '/portal' || pathname.startsWith('/portal/');

/** The `token` of a fragment such as `#token=eyJ…`, or undefined. */
export function tokenOfFragment(hash: string): string | undefined {
  const params = new URLSearchParams(hash.startsWith('#') ? hash.slice(1) : hash);
  const token = params.get('token');
  return token && /^[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+$/.test(token) ? token : undefined;
}

export interface PortalLocation {
  pathname: string;
  hash: string;
}

interface TokenStorage {
  getItem(key: string): string | null;
  setItem(key: string, value: string): void;
}

const storageKey = (sessionId: string) => `platform-portal.token.${sessionId}`;

/**
 * The portal token of this page: the fragment's (stored for reloads), else the one stored for
 * this session; undefined when there is none. `clearFragment` removes the token from the address.
 */
export function takePortalToken(
  location: PortalLocation,
  storage: TokenStorage | undefined,
  clearFragment: () => void,
): string | undefined {
  const sessionId = portalSessionIdOf(location.pathname);
  if (!sessionId) return undefined;
  const fromFragment = tokenOfFragment(location.hash);
  if (fromFragment) {
    try {
      storage?.setItem(storageKey(sessionId), fromFragment);
    } catch {
      // storage full or disabled: the token lives in memory for this page
    }
    clearFragment();
    return fromFragment;
  }
  try {
    return storage?.getItem(storageKey(sessionId)) ?? undefined;
  } catch {
    return undefined;
  }
}
