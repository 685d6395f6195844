import { writableCounts } from './http';
import { buildAccount, login, type TestApi, type World, type WorldParty } from './api';

/** Everything an account operation could write, to prove a refused request wrote nothing. */
export async function databaseSnapshot(api: TestApi) {
  const rows = (table: string, order: string) => api.deps.knex(table).select('*').orderBy(order);
  return {
    counts: await writableCounts(api),
    accounts: await rows('accounts', 'id'),
    refreshTokens: await rows('refresh_tokens', 'jti'),
    contactDetails: await rows('account_contact_details', 'id'),
    recoveryCodes: await rows('recovery_codes', 'id'),
  };
}

/** The stored row of account `id`, secrets included (tests only). */
export function accountRowOf(api: TestApi, id: number) {
  return api.deps.knex('accounts').where({ id }).first();
}

/** The account group of account `id`. */
export async function groupOf(api: TestApi, id: number): Promise<number> {
  const row = await accountRowOf(api, id);
  return row.group_id as number;
}

/** A new account with every permission in `partyId`, logged in. */
export async function freshAccount(
  api: TestApi,
  partyId: number,
  options: { mustChangePassword?: boolean } = {},
) {
  const account = await buildAccount(api.deps, { partyId, ...options });
  const tokens = await login(api, account.email);
  return { ...account, token: tokens.accessToken, refreshToken: tokens.refreshToken };
}

/** The world parties by name, so scope expectations can be written as names. */
export type WorldName = keyof World;

/** Which world parties each world party manages (testing.ts builds the world so). */
const MANAGED: Partial<Record<WorldName, WorldName[]>> = {
  pmc: ['contractor', 'user', 'broker'],
  otherPmc: ['otherUser'],
};

/**
 * The ids of the world accounts `viewer` may see (docs/api.md#scope-of-data; Admin: every world
 * account; others: their party and the parties they manage; a User: only itself), sorted.
 */
export function expectedScope(world: World, viewer: WorldName, as: 'full' | 'bare' = 'full'): number[] {
  const party = world[viewer];
  if (party.type === 7) return [party[as].id];
  const names: WorldName[] =
    party.type === 1 ? (Object.keys(world) as WorldName[]) : [viewer, ...(MANAGED[viewer] ?? [])];
  return names.flatMap((name) => [world[name].full.id, world[name].bare.id]).sort((a, b) => a - b);
}

/** The world's parties with their names. */
export function namedParties(world: World): [WorldName, WorldParty][] {
  return Object.entries(world) as [WorldName, WorldParty][];
}
