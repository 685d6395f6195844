import type { TokenResponse } from '@platform/shared';
import { decodeAccessToken, operatorRefusal, type AccessClaims } from './jwt';

/** The signed-in operator: both tokens and what the access token says. */
export interface Session extends TokenResponse {
  claims: AccessClaims;
}

/** Why the last session ended: the operator signed out, or it could not be refreshed. */
export type SessionEnd = 'signed-out' | 'expired';

/** The subset of the Web Storage API the store needs (sessionStorage in the browser). */
export interface KeyValueStorage {
  getItem(key: string): string | null;
  setItem(key: string, value: string): void;
  removeItem(key: string): void;
}

/** Raised when a request needs a session and there is none (any more). */
export class SessionExpiredError extends Error {
  constructor() {
    super('Your session has ended. Sign in again to continue.');
    this.name = 'SessionExpiredError';
  }
}

/** Raised by `start` for an account that may not use the console. */
export class NotAnOperatorError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'NotAnOperatorError';
  }
}

/**
 * Why a refresh failed. `rejected` means the API refused the refresh token (used, revoked,
 * expired): the session is over. Anything else (the network) leaves the session for a later try.
 */
export class RefreshFailedError extends Error {
  constructor(
    readonly rejected: boolean,
    message: string,
  ) {
    super(message);
    this.name = 'RefreshFailedError';
  }
}

export interface SessionStoreOptions {
  /** Exchanges a refresh token for new tokens (POST /api/auth/refresh). */
  refresh: (refreshToken: string) => Promise<TokenResponse>;
  storage?: KeyValueStorage;
  storageKey?: string;
  now?: () => number;
  /** Refresh this long before the access token expires, so requests rarely meet a 401. */
  refreshLeewayMs?: number;
}

export interface SessionStore {
  /** The current session, or null when signed out. */
  get(): Session | null;
  /** Why the last session ended (null while signed in or before any session). */
  endReason(): SessionEnd | null;
  subscribe(listener: () => void): () => void;
  /** Starts a session with fresh login tokens; throws NotAnOperatorError for other accounts. */
  start(tokens: TokenResponse): Session;
  end(reason: SessionEnd): void;
  /**
   * New tokens for a session whose access token `staleAccessToken` was refused or is about to
   * expire. One refresh runs at a time: concurrent callers share it, and a caller whose token
   * was already replaced gets the current session without a refresh (refresh tokens work once;
   * a second use would revoke the whole login).
   */
  refresh(staleAccessToken: string): Promise<Session>;
  /** The session with an access token that is not about to expire, refreshing first if needed. */
  fresh(): Promise<Session>;
}

const DEFAULT_STORAGE_KEY = 'platform-admin.session';

function toSession(tokens: TokenResponse): Session {
  const claims = decodeAccessToken(tokens.accessToken);
  if (!claims) throw new NotAnOperatorError('The API answered a token the console cannot read.');
  const refusal = operatorRefusal(claims);
  if (refusal) throw new NotAnOperatorError(refusal);
  return { accessToken: tokens.accessToken, refreshToken: tokens.refreshToken, claims };
}

/**
 * Holds the operator's tokens in memory and mirrors them to `storage` (sessionStorage: a reload
 * keeps the operator signed in, another tab or a closed browser does not), and coordinates
 * refreshes with the one-time refresh token.
 */
export function createSessionStore(options: SessionStoreOptions): SessionStore {
  const { storage, refreshLeewayMs = 30_000 } = options;
  const storageKey = options.storageKey ?? DEFAULT_STORAGE_KEY;
  const now = options.now ?? Date.now;
  const listeners = new Set<() => void>();
  let session: Session | null = restore();
  let ended: SessionEnd | null = null;
  let inFlight: Promise<Session> | null = null;

  function restore(): Session | null {
    const stored = storage?.getItem(storageKey);
    if (!stored) return null;
    try {
      return toSession(JSON.parse(stored) as TokenResponse);
    } catch {
      storage?.removeItem(storageKey);
      return null;
    }
  }

  function set(next: Session | null): void {
    session = next;
    if (next) {
      storage?.setItem(
        storageKey,
        JSON.stringify({ accessToken: next.accessToken, refreshToken: next.refreshToken }),
      );
    } else {
      storage?.removeItem(storageKey);
    }
    for (const listener of [...listeners]) listener();
  }

  const store: SessionStore = {
    get: () => session,
    endReason: () => ended,
    subscribe(listener) {
      listeners.add(listener);
      return () => listeners.delete(listener);
    },
    start(tokens) {
      const next = toSession(tokens);
      ended = null;
      inFlight = null;
      set(next);
      return next;
    },
    end(reason) {
      if (!session) return;
      ended = reason;
      inFlight = null;
      set(null);
    },
    refresh(staleAccessToken) {
      const current = session;
      if (!current) return Promise.reject(new SessionExpiredError());
      if (current.accessToken !== staleAccessToken) return Promise.resolve(current);
      if (inFlight) return inFlight;
      const attempt = (async () => {
        let tokens: TokenResponse;
        try {
          tokens = await options.refresh(current.refreshToken);
        } catch (error) {
          // a network failure leaves the session alone: the next request tries again
          if (!(error instanceof RefreshFailedError && error.rejected)) throw error;
          // the session may have ended or been replaced (a new sign-in) meanwhile
          if (session === current) store.end('expired');
          throw new SessionExpiredError();
        }
        if (session !== current) throw new SessionExpiredError();
        try {
          const next = toSession(tokens);
          set(next);
          return next;
        } catch {
          store.end('expired');
          throw new SessionExpiredError();
        }
      })();
      inFlight = attempt;
      const clear = () => {
        if (inFlight === attempt) inFlight = null;
      };
      attempt.then(clear, clear);
      return attempt;
    },
    async fresh() {
      const current = session;
      if (!current) throw new SessionExpiredError();
      if (current.claims.expiresAt - now() > refreshLeewayMs) return current;
      return store.refresh(current.accessToken);
    },
  };
  return store;
}
