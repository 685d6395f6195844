import { randomBytes } from 'node:crypto';
import type { Knex } from '../packages/db/src/index';
import { newPartyPlacement, partyBucket, registrationEventRows } from '../packages/db/src/buckets';
import type { SecretBox } from '../packages/crypto/src/index';
import { PartyType, PERMISSIONS, PermissionAction } from '../packages/shared/src/index';
import { hashPassword, verifyPassword } from '../apps/api/src/auth/passwords';

/** The demo accounts' password unless `DEMO_PASSWORD` says otherwise (documented in the README). */
export const DEFAULT_DEMO_PASSWORD = 'Demo-Password-1!';

/**
 * The retry schedule of the demo start (`pnpm start` outside production, unless
 * WEBHOOK_RETRY_SCHEDULE is set): the spec's seven attempts, five seconds apart, so a webhook that
 * keeps failing is Retrying for half a minute and then Failed, blocking its group, within the
 * first minute instead of after two days (docs/decisions.md › The demo).
 */
export const DEMO_RETRY_SCHEDULE = '0s,5s,5s,5s,5s,5s,5s';

/**
 * The breaker threshold of the demo start (unless DISPATCHER_BREAKER_FAILURES is set): one more
 * than the schedule's attempts, so the failing registration's endpoint (an endpoint of its own)
 * spends all seven as real requests and "Retry blocker" is answered 200 at once. At the default
 * (5) its breaker would open after five, the last two attempts would be `circuit-open`, and the
 * echo target would still owe two failures to the retry (docs/decisions.md › The demo).
 */
export const DEMO_BREAKER_FAILURES = String(DEMO_RETRY_SCHEDULE.split(',').length + 1);

/**
 * Whether `pnpm start` runs the demo (echo target, demo registrations, the trickle of changes):
 * never with NODE_ENV=production, otherwise unless DEMO=false.
 */
export function demoEnabled(env: NodeJS.ProcessEnv): boolean {
  return env.NODE_ENV !== 'production' && env.DEMO !== 'false';
}

const ALL_PERMISSION_IDS = PERMISSIONS.map((p) => p.id);
const READ_PERMISSION_IDS = PERMISSIONS.filter((p) => p.action === PermissionAction.Read).map((p) => p.id);

interface DemoAccount {
  email: string;
  firstName: string;
  lastName: string;
  /** Name of the account group within the party. */
  group: string;
  permissionIds: readonly number[];
  /** What the login is good for, shown by `pnpm start`. */
  description: string;
}

interface DemoParty {
  name: string;
  type: PartyType;
  /** Name of the managing party, which must come earlier in the list. */
  managedBy?: string;
  accounts: DemoAccount[];
}

const DEMO_PARTIES: readonly DemoParty[] = [
  {
    name: 'Platform Admin',
    type: PartyType.Admin,
    accounts: [
      {
        email: 'admin@example.com',
        firstName: 'Ada',
        lastName: 'Admin',
        group: 'Administrators',
        permissionIds: ALL_PERMISSION_IDS,
        description: 'Admin, sees every party',
      },
    ],
  },
  {
    name: 'Acme Property Management',
    type: PartyType.PropertyManagementCompany,
    accounts: [
      {
        email: 'manager@example.com',
        firstName: 'Max',
        lastName: 'Manager',
        group: 'Managers',
        permissionIds: ALL_PERMISSION_IDS,
        description: 'property manager, every permission',
      },
      {
        email: 'viewer@example.com',
        firstName: 'Vera',
        lastName: 'Viewer',
        group: 'Viewers',
        permissionIds: READ_PERMISSION_IDS,
        description: 'property manager, read permissions only',
      },
    ],
  },
  {
    name: 'Bolt Contractors',
    type: PartyType.Contractor,
    managedBy: 'Acme Property Management',
    accounts: [
      {
        email: 'contractor@example.com',
        firstName: 'Carl',
        lastName: 'Contractor',
        group: 'Contractors',
        permissionIds: READ_PERMISSION_IDS,
        description: 'contractor managed by Acme, read permissions only',
      },
    ],
  },
  {
    name: 'Jane Tenant',
    type: PartyType.User,
    managedBy: 'Acme Property Management',
    accounts: [
      {
        email: 'tenant@example.com',
        firstName: 'Jane',
        lastName: 'Tenant',
        // users skip permission checks (docs/api.md#permissions), so the group's content does not matter
        group: 'Tenants',
        permissionIds: READ_PERMISSION_IDS,
        description: 'user (tenant) managed by Acme, sees only their own records',
      },
    ],
  },
  {
    name: 'Other Homes',
    type: PartyType.PropertyManagementCompany,
    accounts: [
      {
        email: 'other-manager@example.com',
        firstName: 'Otto',
        lastName: 'Other',
        group: 'Managers',
        permissionIds: ALL_PERMISSION_IDS,
        description: 'a second property manager, cannot see Acme data',
      },
    ],
  },
];

/** The demo logins and what each is for, in seed order. */
export const DEMO_ACCOUNTS: readonly { email: string; party: string; description: string }[] =
  DEMO_PARTIES.flatMap((party) =>
    party.accounts.map(({ email, description }) => ({ email, party: party.name, description })),
  );

/**
 * Creates the documented demo parties, groups and accounts, or brings existing ones back to their
 * documented state; running it again changes nothing unless `password` changed. Rows are found by
 * party name, group name and email, so the seed is safe on every start.
 */
export async function seedDemoData(knex: Knex, options: { password: string }): Promise<void> {
  await knex.transaction(async (trx) => {
    // Two starts against one database would otherwise both miss a row and both insert it.
    await trx.raw(`select pg_advisory_xact_lock(hashtext('platform.demo-seed'))`);
    const partyIds = new Map<string, number>();
    for (const party of DEMO_PARTIES) {
      const managedById = party.managedBy ? partyIds.get(party.managedBy) : undefined;
      const partyId = await ensureParty(trx, party, managedById ?? null);
      partyIds.set(party.name, partyId);
      for (const account of party.accounts) {
        const groupId = await ensureGroup(trx, partyId, account.group, account.permissionIds);
        await ensureAccount(trx, account, partyId, groupId, options.password);
      }
    }
  });
}

async function ensureParty(
  trx: Knex.Transaction,
  party: DemoParty,
  managedById: number | null,
): Promise<number> {
  const existing = await trx('parties')
    .whereNull('deleted')
    .where('name', party.name)
    .orderBy('id')
    .first<{ id: number; type: number; managed_by_party_id: number | null } | undefined>(
      'id',
      'type',
      'managed_by_party_id',
    );
  if (!existing) {
    const [row] = await trx('parties')
      .insert({
        name: party.name,
        type: party.type,
        managed_by_party_id: managedById,
        ...(await newPartyPlacement(trx, managedById)),
      })
      .returning<{ id: number }[]>('id');
    return row!.id;
  }
  if (existing.type !== party.type || existing.managed_by_party_id !== managedById) {
    await trx('parties')
      .where('id', existing.id)
      .update({ type: party.type, managed_by_party_id: managedById, last_modified: trx.fn.now() });
  }
  return existing.id;
}

async function ensureGroup(
  trx: Knex.Transaction,
  partyId: number,
  name: string,
  permissionIds: readonly number[],
): Promise<number> {
  let group = await trx('account_groups')
    .whereNull('deleted')
    .where({ party_id: partyId, name })
    .orderBy('id')
    .first<{ id: number } | undefined>('id');
  if (!group) {
    [group] = await trx('account_groups')
      .insert({ party_id: partyId, name })
      .returning<{ id: number }[]>('id');
  }
  const groupId = group!.id;
  // The README promises what each demo login may do, so the seed restores exactly that set.
  await trx('account_group_permissions')
    .where('group_id', groupId)
    .whereNotIn('permission_id', permissionIds)
    .delete();
  await trx('account_group_permissions')
    .insert(permissionIds.map((permissionId) => ({ group_id: groupId, permission_id: permissionId })))
    .onConflict(['group_id', 'permission_id'])
    .ignore();
  return groupId;
}

async function ensureAccount(
  trx: Knex.Transaction,
  account: DemoAccount,
  partyId: number,
  groupId: number,
  password: string,
): Promise<void> {
  const existing = await trx('accounts')
    .whereNull('deleted')
    .whereRaw('lower(email) = lower(?)', [account.email])
    .first<
      | {
          id: number;
          party_id: number;
          group_id: number;
          must_change_password: boolean;
          password_hash: string | null;
        }
      | undefined
    >('id', 'party_id', 'group_id', 'must_change_password', 'password_hash');
  if (!existing) {
    await trx('accounts').insert({
      party_id: partyId,
      group_id: groupId,
      email: account.email,
      first_name: account.firstName,
      last_name: account.lastName,
      password_hash: await hashPassword(password),
    });
    return;
  }
  const patch: Record<string, unknown> = {};
  if (existing.party_id !== partyId) patch.party_id = partyId;
  if (existing.group_id !== groupId) patch.group_id = groupId;
  if (existing.must_change_password) patch.must_change_password = false;
  // Rehash only when the password changed: an unchanged hash keeps a re-run a no-op, and a new
  // DEMO_PASSWORD takes effect on the next start.
  if (!(await verifyPassword(existing.password_hash, password)))
    patch.password_hash = await hashPassword(password);
  if (Object.keys(patch).length > 0) {
    await trx('accounts')
      .where('id', existing.id)
      .update({ ...patch, last_modified: trx.fn.now() });
  }
}

/** Paths of the bundled echo target (scripts/echo-target.ts) that the demo registrations use. */
export const DEMO_REGISTRATIONS = [
  {
    path: '/demo/ungrouped',
    query: '',
    shouldGroup: false,
    description: 'ungrouped, always answers 200',
  },
  {
    // as many failing tries as the demo schedule has attempts: the first webhook ends Failed and
    // blocks its group; after that the path answers 200, so "Retry blocker" drains the group
    path: '/demo/grouped',
    query: `?failFirst=${DEMO_RETRY_SCHEDULE.split(',').length}`,
    shouldGroup: true,
    description: 'grouped, fails its first tries',
  },
] as const;

/**
 * Registers the echo target at `echoOrigin` for the manager's party (every Property event), or
 * brings the live registrations of these paths back to that origin; answers their plain signing
 * secrets (sealed with `secrets`) for the echo target to check signatures with. Idempotent.
 */
export async function seedDemoRegistrations(
  knex: Knex,
  options: { echoOrigin: string; secrets: SecretBox },
): Promise<string[]> {
  return knex.transaction(async (trx) => {
    await trx.raw(`select pg_advisory_xact_lock(hashtext('platform.demo-seed'))`);
    const manager = await trx('accounts')
      .whereNull('deleted')
      .where('email', 'manager@example.com')
      .first<{ id: number; party_id: number }>('id', 'party_id');
    if (!manager) throw new Error('seedDemoRegistrations: run seedDemoData first');
    const live = (await trx('webhook_registrations')
      .whereNull('deleted')
      .where('party_id', manager.party_id)
      .orderBy('id')
      .select('id', 'target_url', 'signing_secret')) as {
      id: number;
      target_url: string;
      signing_secret: string;
    }[];
    const signingSecrets: string[] = [];
    for (const demo of DEMO_REGISTRATIONS) {
      const targetUrl = `${options.echoOrigin}${demo.path}${demo.query}`;
      const existing = live.find(
        (r) => URL.canParse(r.target_url) && new URL(r.target_url).pathname === demo.path,
      );
      if (existing) {
        if (existing.target_url !== targetUrl)
          await trx('webhook_registrations')
            .where('id', existing.id)
            .update({ target_url: targetUrl, last_modified: trx.fn.now() });
        signingSecrets.push(options.secrets.open(existing.signing_secret));
        continue;
      }
      const signingSecret = `whsec_${randomBytes(32).toString('base64')}`;
      const [row] = (await trx('webhook_registrations')
        .insert({
          party_id: manager.party_id,
          bucket: partyBucket(trx, manager.party_id),
          target_url: targetUrl,
          should_group: demo.shouldGroup,
          signing_secret: options.secrets.seal(signingSecret),
          created_by_account_id: manager.id,
        })
        .returning(['id', 'bucket'])) as { id: number; bucket: number }[];
      await trx('webhook_events').insert(
        registrationEventRows(
          row!,
          [1, 2, 3].map((type) => ({ entity_name: 'Property', type })),
        ),
      );
      signingSecrets.push(signingSecret);
    }
    return signingSecrets;
  });
}
