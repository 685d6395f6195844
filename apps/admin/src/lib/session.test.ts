import type { TokenResponse } from '@platform/shared';
import { describe, expect, it, vi } from 'vitest';
import {
  createSessionStore,
  NotAnOperatorError,
  RefreshFailedError,
  SessionExpiredError,
  type KeyValueStorage,
} from './session';
import { fakeAccessToken } from '../../tests/support/tokens';

let serial = 0;
const tokens = (overrides: Record<string, unknown> = {}): TokenResponse => ({
  accessToken: fakeAccessToken({ jti: ++serial, ...overrides }),
  refreshToken: `refresh-${serial}`,
});

function memoryStorage(): KeyValueStorage & { data: Map<string, string> } {
  const data = new Map<string, string>();
  return {
    data,
    getItem: (key) => data.get(key) ?? null,
    setItem: (key, value) => void data.set(key, value),
    removeItem: (key) => void data.delete(key),
  };
}

/** A refresh the test settles by hand, counting calls. */
function manualRefresh() {
  const calls: { refreshToken: string; resolve: (t: TokenResponse) => void; reject: (e: unknown) => void }[] =
    [];
  const refresh = vi.fn(
    (refreshToken: string) =>
      new Promise<TokenResponse>((resolve, reject) => calls.push({ refreshToken, resolve, reject })),
  );
  return { refresh, calls };
}

describe('session store', () => {
  it('starts a session for an operator and keeps it in storage across a reload', () => {
    const storage = memoryStorage();
    const store = createSessionStore({ refresh: vi.fn(), storage });
    const session = store.start(tokens());
    expect(session.claims).toMatchObject({ accountId: 7, partyType: 2, email: 'manager@example.com' });
    const reloaded = createSessionStore({ refresh: vi.fn(), storage });
    expect(reloaded.get()?.refreshToken).toBe(session.refreshToken);
  });

  it('refuses accounts that are not operators, and tokens of another scope', () => {
    const store = createSessionStore({ refresh: vi.fn() });
    expect(() => store.start(tokens({ accountRole: '5' }))).toThrow(NotAnOperatorError);
    expect(() => store.start(tokens({ accountRole: '7' }))).toThrow(/for operators/);
    expect(() => store.start(tokens({ scope: 'change-password' }))).toThrow(/change its password/);
    expect(() => store.start({ accessToken: 'not-a-jwt', refreshToken: 'x' })).toThrow(NotAnOperatorError);
    expect(store.get()).toBeNull();
    expect(store.start(tokens({ accountRole: '1' })).claims.partyType).toBe(1);
  });

  it('runs one refresh for concurrent callers and spends the refresh token once', async () => {
    const { refresh, calls } = manualRefresh();
    const store = createSessionStore({ refresh });
    const first = store.start(tokens());
    const a = store.refresh(first.accessToken);
    const b = store.refresh(first.accessToken);
    expect(refresh).toHaveBeenCalledTimes(1);
    expect(calls[0]!.refreshToken).toBe(first.refreshToken);
    const next = tokens();
    calls[0]!.resolve(next);
    expect((await a).accessToken).toBe(next.accessToken);
    expect((await b).accessToken).toBe(next.accessToken);
    // a caller that still holds the replaced token gets the new session without a second refresh
    expect((await store.refresh(first.accessToken)).accessToken).toBe(next.accessToken);
    expect(refresh).toHaveBeenCalledTimes(1);
  });

  it('ends the session as expired when the API refuses the refresh token, and notifies', async () => {
    const { refresh, calls } = manualRefresh();
    const storage = memoryStorage();
    const store = createSessionStore({ refresh, storage });
    const session = store.start(tokens());
    const listener = vi.fn();
    store.subscribe(listener);
    const attempt = store.refresh(session.accessToken);
    calls[0]!.reject(new RefreshFailedError(true, 'refused'));
    await expect(attempt).rejects.toBeInstanceOf(SessionExpiredError);
    expect(store.get()).toBeNull();
    expect(store.endReason()).toBe('expired');
    expect(storage.data.size).toBe(0);
    expect(listener).toHaveBeenCalled();
    await expect(store.fresh()).rejects.toBeInstanceOf(SessionExpiredError);
  });

  it('keeps the session when the refresh fails for another reason (the network), and tries again later', async () => {
    const { refresh, calls } = manualRefresh();
    const store = createSessionStore({ refresh });
    const session = store.start(tokens());
    const attempt = store.refresh(session.accessToken);
    calls[0]!.reject(new RefreshFailedError(false, 'offline'));
    await expect(attempt).rejects.toThrow('offline');
    expect(store.get()).toBe(session);
    const again = store.refresh(session.accessToken);
    expect(refresh).toHaveBeenCalledTimes(2);
    calls[1]!.resolve(tokens());
    await expect(again).resolves.toBeTruthy();
  });

  it('does not let a refresh that outlived its session overwrite a new sign-in', async () => {
    const { refresh, calls } = manualRefresh();
    const store = createSessionStore({ refresh });
    const old = store.start(tokens());
    const attempt = store.refresh(old.accessToken);
    store.end('signed-out');
    const fresh = store.start(tokens({ email: 'admin@example.com', accountRole: '1' }));
    calls[0]!.resolve(tokens());
    await expect(attempt).rejects.toBeInstanceOf(SessionExpiredError);
    expect(store.get()).toBe(fresh);
  });

  it('refreshes ahead of expiry in fresh(), and not before', async () => {
    let now = Date.now();
    const { refresh, calls } = manualRefresh();
    const store = createSessionStore({ refresh, now: () => now, refreshLeewayMs: 30_000 });
    const session = store.start(tokens({ exp: Math.floor(now / 1000) + 120 }));
    await expect(store.fresh()).resolves.toBe(session);
    expect(refresh).not.toHaveBeenCalled();
    now += 100_000; // 20 s before expiry
    const pending = store.fresh();
    expect(refresh).toHaveBeenCalledTimes(1);
    calls[0]!.resolve(tokens());
    expect((await pending).accessToken).not.toBe(session.accessToken);
  });

  it('forgets a stored session it cannot read', () => {
    const storage = memoryStorage();
    storage.setItem('platform-admin.session', '{not json');
    const store = createSessionStore({ refresh: vi.fn(), storage });
    expect(store.get()).toBeNull();
    expect(storage.data.size).toBe(0);
  });
});
