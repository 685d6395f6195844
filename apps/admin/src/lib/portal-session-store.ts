import type { AccessClaims } from './jwt';
import { SessionExpiredError, type Session, type SessionEnd, type SessionStore } from './session';

/**
 * The session store of the endpoint portal: one token from the portal's URL, no refresh. The API
 * answering 401 means the portal session was revoked or expired; the store then ends, and the
 * portal shows so (docs/portal.md).
 */
export function createPortalSessionStore(token: string | undefined): SessionStore {
  const listeners = new Set<() => void>();
  let session: Session | null = token
    ? { accessToken: token, refreshToken: '', claims: {} as AccessClaims }
    : null;
  let ended: SessionEnd | null = token ? null : 'expired';
  const end = (reason: SessionEnd) => {
    session = null;
    ended = reason;
    for (const listener of [...listeners]) listener();
  };
  return {
    get: () => session,
    endReason: () => ended,
    subscribe(listener) {
      listeners.add(listener);
      return () => listeners.delete(listener);
    },
    start() {
      throw new Error('a portal session starts from its URL');
    },
    end,
    refresh() {
      end('expired');
      return Promise.reject(new SessionExpiredError());
    },
    fresh() {
      return session ? Promise.resolve(session) : Promise.reject(new SessionExpiredError());
    },
  };
}
