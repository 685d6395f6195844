import { PartyType } from '@platform/shared';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildAccount, buildParty, login, startTestApi, type TestApi } from '../../testing';

let api: TestApi;
let email: string;
beforeAll(async () => {
  api = await startTestApi();
  const party = await buildParty(api.deps, { type: PartyType.PropertyManagementCompany, name: 'Acme' });
  ({ email } = await buildAccount(api.deps, { partyId: party.id }));
});
afterAll(() => api.close());

describe('login', () => {
  it('answers tokens that open the API', async () => {
    const tokens = await login(api, email);
    const response = await api.fetch('/api/accounts/myself', { token: tokens.accessToken });
    expect(response.status).toBe(200);
    expect(await response.json()).toMatchObject({ email });
  });
});
