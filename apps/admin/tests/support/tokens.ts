/** Helpers for the console's unit tests (vitest in Node; no browser). */

const base64Url = (value: unknown) =>
  btoa(String.fromCharCode(...new TextEncoder().encode(JSON.stringify(value))))
    .replace(/\+/g, '-')
    .replace(/\//g, '_')
    .replace(/=+$/, '');

/** An unsigned JWT with the claims of docs/api.md#access-tokens (the console never verifies signatures). */
export function fakeAccessToken(overrides: Record<string, unknown> = {}): string {
  const payload = {
    sub: '7',
    email: 'manager@example.com',
    partyId: '2',
    partyName: 'Acme Property Management',
    accountRole: '2',
    scope: 'platform',
    permissions: '',
    exp: Math.floor(Date.now() / 1000) + 900,
    ...overrides,
  };
  return `${base64Url({ alg: 'RS256' })}.${base64Url(payload)}.signature`;
}
