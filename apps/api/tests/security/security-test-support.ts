import { signWebhookToken, type SigningKey } from '@platform/crypto';
import { partyBucket } from '@platform/db';
import { PORTAL_ACTIONS, TokenScope, type PartyType, type PortalAction } from '@platform/shared';
import { SignJWT, type JWTPayload } from 'jose';
import pino, { type Logger } from 'pino';
import { PORTAL_ROUTE_RULES, portalRouteKey } from '../../src/auth/portal-access';
import { buildOpenApiDocument } from '../../src/http/openapi';
import type { RouteDefinition } from '../../src/http/route';
import { ROUTES, WEBHOOKS } from '../../src/routes';
import type { TestApi, World, WorldParty } from '../support/api';
import { operationsOf, type OpenApiDocument } from './fuzz-document';

/** A logger at the most verbose level whose every line is kept, to read what the API logged. */
export function captureLogger(): { logger: Logger; lines: string[] } {
  const lines: string[] = [];
  const logger = pino({ level: 'trace' }, { write: (line: string) => void lines.push(line) });
  return { logger, lines };
}

/** Tables that only the migration tool writes. */
const MIGRATION_TABLES = new Set(['knex_migrations', 'knex_migrations_lock']);

/** One row written, as the trigger recorded it. */
export interface WriteRecord {
  table: string;
  op: 'INSERT' | 'UPDATE' | 'DELETE';
  /** The columns an UPDATE changed, by name; empty for an INSERT or a DELETE. */
  changed: string[];
  /** The row after the write (before it, for a DELETE), every column as JSON. */
  row: Record<string, unknown>;
}

/** `table op`, for messages. */
export const describeWrite = (write: WriteRecord) =>
  `${write.table} ${write.op}${write.changed.length ? ` (${write.changed.join(', ')})` : ''}`;

/**
 * Records every row written to any table of the test database in `fuzz_writes`: the table, the
 * operation, the columns an update changed and the row itself, by a row trigger on each table.
 * Committed writes stay recorded, rolled-back ones vanish with their transaction. Row counts miss
 * an update, or a delete and an insert; this does not. The columns and the row let a test allow a
 * refusal exactly the writes it makes on purpose (a strike counter of the account it names), not
 * a whole table.
 */
export async function recordWrites(api: TestApi): Promise<{
  /**
   * Every write recorded since the previous call, oldest first (one indexed query). Called
   * between two requests sent one after another, it answers what the first one wrote: the API
   * commits a request's writes before it answers.
   */
  take(): Promise<WriteRecord[]>;
  /** The row count of every table the triggers watch, in one query. */
  counts(): Promise<Record<string, number>>;
}> {
  const knex = api.deps.knex;
  // to_jsonb of the whole row: the fuzz run's rows are small (its uploads are at most a few
  // hundred bytes; the 11 MiB one is refused before the database)
  await knex.raw(`
    create table fuzz_writes (
      id bigserial primary key, table_name text not null, op text not null,
      changed text[] not null, row jsonb not null
    );
    create function fuzz_record_write() returns trigger language plpgsql as $$
      declare
        new_row jsonb := case when tg_op <> 'DELETE' then to_jsonb(new) end;
        old_row jsonb := case when tg_op <> 'INSERT' then to_jsonb(old) end;
      begin
        insert into fuzz_writes (table_name, op, changed, row) values (
          -- a partition's rows count as its table's (a trigger on a partitioned table fires on the partition)
          coalesce((select p.relname from pg_inherits i join pg_class p on p.oid = i.inhparent
                     where i.inhrelid = tg_relid), tg_table_name),
          tg_op,
          case when tg_op = 'UPDATE'
            then array(select key from jsonb_each(new_row) where value is distinct from old_row -> key order by key)
            else '{}' end,
          coalesce(new_row, old_row));
        return null;
      end $$;
  `);
  const { rows } = await knex.raw<{ rows: { name: string }[] }>(
    // tables and partitioned tables, not their partitions (a partitioned table's trigger is theirs)
    `select c.relname as name from pg_class c
      where c.relnamespace = 'public'::regnamespace and c.relkind in ('r', 'p')
        and not c.relispartition and c.relname <> 'fuzz_writes'
      order by c.relname`,
  );
  const tables = rows.map((row) => row.name).filter((name) => !MIGRATION_TABLES.has(name));
  for (const name of tables) {
    await knex.raw(
      `create trigger fuzz_record_write after insert or update or delete on ?? for each row execute function fuzz_record_write()`,
      [name],
    );
  }
  const countsSql = knex
    .raw(
      `select ${tables.map(() => '(select count(*) from ??) as ??').join(', ')}`,
      tables.flatMap((name) => [name, name]),
    )
    .toString();
  /** The newest record already handed out. */
  let taken = 0;
  return {
    take: async () => {
      const found = await knex('fuzz_writes').where('id', '>', taken).orderBy('id').select<
        {
          id: string;
          table_name: string;
          op: WriteRecord['op'];
          changed: string[];
          row: WriteRecord['row'];
        }[]
      >('id', 'table_name', 'op', 'changed', 'row');
      if (found.length) taken = Number(found[found.length - 1]!.id);
      return found.map(({ table_name, op, changed, row }) => ({ table: table_name, op, changed, row }));
    },
    counts: async () => {
      const result = await knex.raw<{ rows: Record<string, string>[] }>(countsSql);
      return Object.fromEntries(Object.entries(result.rows[0] ?? {}).map(([name, n]) => [name, Number(n)]));
    },
  };
}

/**
 * The tables whose row count changed from `before` to `after` by other than the rows `writes`
 * inserted and deleted: a table the write log would have missed.
 */
export function unexplainedCounts(
  before: Record<string, number>,
  after: Record<string, number>,
  writes: readonly WriteRecord[],
): string[] {
  const net = new Map<string, number>();
  for (const { table, op } of writes) {
    net.set(table, (net.get(table) ?? 0) + (op === 'INSERT' ? 1 : op === 'DELETE' ? -1 : 0));
  }
  return Object.keys(after).filter(
    (table) => (after[table] ?? 0) - (before[table] ?? 0) !== (net.get(table) ?? 0),
  );
}

/** The route that serves an operation of the document (`{id}` in the document is `:id` in the route). */
export const routeOf = (method: string, path: string): RouteDefinition | undefined =>
  ROUTES.find((route) => route.method === method && route.path.replace(/:(\w+)/g, '{$1}') === path);

/**
 * The OpenAPI document the API serves, built from its routes, and every operation in it with the
 * auth its route declares: reads first, then creates and updates, deletes last (so the rows the
 * others need live longest).
 */
export function documentedOperations() {
  const document = buildOpenApiDocument(ROUTES, { webhooks: WEBHOOKS }) as unknown as OpenApiDocument;
  const operations = operationsOf(document, (method, path) => {
    const route = routeOf(method, path);
    if (!route) throw new Error(`${method} ${path} is in the document but not among the routes`);
    return {
      auth:
        route.auth === 'public'
          ? 'public'
          : {
              allow: route.auth.allow,
              portal: PORTAL_ROUTE_RULES[portalRouteKey(route)] !== undefined,
              portalOnly: route.auth.scopes?.length === 1 && route.auth.scopes[0] === TokenScope.Portal,
            },
      textual: route.textual ?? false,
    };
  });
  const order = { get: 0, post: 1, put: 2, patch: 3, delete: 4 } as const;
  operations.sort((a, b) => order[a.method] - order[b.method]);
  return { document, operations };
}

/**
 * Access tokens for auth attacks, bound to what a test file sets up in its beforeAll (read when
 * called): the API, whose test clock says now; the claims of a valid access token; the API's key.
 */
export function tokenMaker(setup: () => { api: TestApi; claims: JWTPayload; key: SigningKey }) {
  const nowSeconds = () => Math.floor(setup().api.clock.now().getTime() / 1000);
  return {
    nowSeconds,
    /** Valid access claims at the test clock's now; `changes` win, `undefined` removes a claim. */
    accessClaims(changes: Record<string, unknown> = {}): JWTPayload {
      const iat = nowSeconds();
      const payload: Record<string, unknown> = { ...setup().claims, iat, exp: iat + 15 * 60, ...changes };
      for (const [name, value] of Object.entries(payload)) if (value === undefined) delete payload[name];
      return payload;
    },
    /** `payload` signed RS256 by `signer` (the API's key by default), under the API's kid. */
    mint(payload: JWTPayload, signer?: SigningKey): Promise<string> {
      const { key } = setup();
      return new SignJWT(payload)
        .setProtectedHeader({ alg: 'RS256', typ: 'JWT', kid: key.kid })
        .sign((signer ?? key).privateKey);
    },
  };
}

/**
 * A live registration of `party` (inserted directly) and a webhook token for it, signed with
 * `key` as the dispatcher signs one; `partyId` claims another party than the owner when given.
 */
export async function liveWebhookToken(
  api: TestApi,
  key: SigningKey,
  party: WorldParty,
  partyId = party.id,
): Promise<{ id: number; token: string }> {
  const [registration] = await api.deps
    .knex('webhook_registrations')
    .insert({
      party_id: party.id,
      bucket: partyBucket(api.deps.knex, party.id),
      target_url: 'https://hooks.example.com/x',
      signing_secret: 'x',
      auth_type: 2,
    })
    .returning('id');
  const { token } = await signWebhookToken(
    key,
    { registrationId: registration.id, partyId, partyName: 'Party', partyType: party.type as PartyType },
    { issuer: api.deps.config.JWT_ISSUER, audience: api.deps.config.JWT_AUDIENCE, now: api.clock.now() },
  );
  return { id: registration.id as number, token };
}

/**
 * Turns the conference feature on for both PMCs of `world`: conference resources answer only
 * parties with it, so a refusal there is about the caller or its token, not the feature.
 */
export async function enableConferencesOfPmcs(api: TestApi, world: World): Promise<void> {
  await api.deps
    .knex('parties')
    .whereIn('id', [world.pmc.id, world.otherPmc.id])
    .update({ conference_enabled: true });
}

/**
 * Opens an endpoint-portal session (docs/portal.md) for `party` through the API, as its full
 * account, granted `actions` (every one by default); answers its id and token.
 */
export async function openPortalSession(
  api: TestApi,
  party: WorldParty,
  actions: readonly PortalAction[] = PORTAL_ACTIONS,
): Promise<{ id: string; token: string }> {
  const response = await api.fetch('/api/webhook-portal/sessions', {
    method: 'POST',
    token: party.full.token,
    json: { partyId: party.id, actions, expiresIn: '24h', allowedOrigins: [] },
  });
  if (response.status !== 201) throw new Error(`portal session: ${response.status} ${await response.text()}`);
  return (await response.json()) as { id: string; token: string };
}
