import { describe, expect, it } from 'vitest';
import { isPortalPath, portalSessionIdOf, takePortalToken, tokenOfFragment } from './portal-token';

const ID = '3b0c8a52-8f5e-4a8e-9a43-2d1c0e6f7a10';
const TOKEN = 'eyJhbGciOiJSUzI1NiJ9.eyJzdWIiOiIxIn0.c2lnbmF0dXJl';

function memoryStorage() {
  const items = new Map<string, string>();
  return {
    items,
    getItem: (key: string) => items.get(key) ?? null,
    setItem: (key: string, value: string) => void items.set(key, value),
  };
}

describe('the portal token', () => {
  it('reads the session id of the path and the token of the fragment', () => {
    expect(portalSessionIdOf(`/portal/${ID}`)).toBe(ID);
    expect(portalSessionIdOf(`/portal/${ID.toUpperCase()}/`)).toBe(ID);
    expect(portalSessionIdOf('/portal/x')).toBeUndefined();
    expect(portalSessionIdOf('/admin/webhooks')).toBeUndefined();
    expect(isPortalPath('/portal')).toBe(true);
    expect(isPortalPath('/admin/portal')).toBe(false);
    expect(tokenOfFragment(`#token=${TOKEN}`)).toBe(TOKEN);
    expect(tokenOfFragment('#token=not a jwt')).toBeUndefined();
    expect(tokenOfFragment('')).toBeUndefined();
  });

  it('takes it from the fragment, keeps it for a reload, and clears the address', () => {
    const storage = memoryStorage();
    let cleared = 0;
    const clear = () => cleared++;
    expect(takePortalToken({ pathname: `/portal/${ID}`, hash: `#token=${TOKEN}` }, storage, clear)).toBe(
      TOKEN,
    );
    expect(cleared).toBe(1);
    // the reload: no fragment any more, the stored token of this session
    expect(takePortalToken({ pathname: `/portal/${ID}`, hash: '' }, storage, clear)).toBe(TOKEN);
    // another session's page does not get it
    const other = '00000000-0000-4000-8000-000000000000';
    expect(takePortalToken({ pathname: `/portal/${other}`, hash: '' }, storage, clear)).toBeUndefined();
    expect(takePortalToken({ pathname: '/portal', hash: `#token=${TOKEN}` }, storage, clear)).toBeUndefined();
  });
});
