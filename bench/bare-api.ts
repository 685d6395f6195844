/**
 * The bare-handler baseline of `pnpm bench --api` (docs/performance.md#the-modes): GET /api/properties and
 * PATCH /api/properties/{id} on plain `node:http` and a `pg` Pool, no framework layers, doing the
 * SQL a correct implementation needs and answering the API's JSON shapes, so the API's rate can
 * be reported as a ratio of this one's on the same machine and database.
 *
 *   node --import tsx bench/bare-api.ts <port>     (env: DATABASE_URL, DATA_DIR as the API's)
 *
 * What it does like the API: it verifies the bearer token (RS256 with node:crypto against the
 * API's key in DATA_DIR, issuer, audience, expiry; like the API it checks a token's signature once
 * and then remembers it until it expires), checks the route's permission from the token, scopes
 * every statement to the caller's party and the parties it manages, and writes the update, its
 * entity change, the webhooks fan-out and the NOTIFY in one transaction with the API's own
 * fan-out statement (`ENQUEUE_ENTITY_CHANGE_SQL`). Its pool has the API's default size (10).
 *
 * What it skips, on purpose (the framework layers whose cost the ratio measures): zod validation
 * of query and body (a PATCH here takes only known writable fields, unchecked), ProblemDetails
 * bodies (errors are bare statuses), logging, OpenAPI, request ids. What it serves only as far as
 * the bench needs: the default sort (id ascending), no filters, platform-scope tokens of parties
 * other than Admin (which would see every party: a 403 here), a PATCH without relations.
 *
 * Round trips, the same as the API's (`apps/api/src/resources/round-trips.test.ts` counts those):
 * a GET list is one statement, the API's page statement shape (`pageStatement`: the total count
 * joined to the page, so a page past the end still answers its total); a PATCH is BEGIN, the
 * scoped UPDATE … RETURNING, the fan-out statement, COMMIT.
 */
import { createPublicKey, verify, type KeyObject } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import { join } from 'node:path';
import pg from 'pg';
import { ENQUEUE_ENTITY_CHANGE_SQL, enqueueBindings } from '@platform/db';
import { decodePermissions, PartyType, permissionByName, TokenScope } from '@platform/shared';
import { positional } from './positional';

const ISSUER = process.env.JWT_ISSUER ?? 'https://platform.example.com';
const AUDIENCE = process.env.JWT_AUDIENCE ?? 'platform-api-gen2';
const READ = permissionByName('Property.Read').id;
const UPDATE = permissionByName('Property.Update').id;

/** Write fields → columns, as the API's property resource maps them. */
const COLUMNS: Record<string, string> = {
  name: 'name',
  street: 'street',
  houseNumber: 'house_number',
  postalCode: 'postal_code',
  city: 'city',
  country: 'country',
  propertyType: 'property_type',
  yearBuilt: 'year_built',
  notes: 'notes',
};

/** Rows of the caller's party and of the parties it manages ($1: the caller's party). */
const SCOPE = `properties.deleted is null
   and (properties.party_id = $1
        or properties.party_id in (select id from parties where managed_by_party_id = $1 and deleted is null))`;

const LIST = `select p.*, c.count as total_count
  from (select count(*) as count from properties where ${SCOPE}) c
  left join lateral (select properties.* from properties where ${SCOPE}
                      order by properties.id asc limit $2 offset $3) p on true`;

/** The API's fan-out statement, with positional bindings. */
const ENQUEUE = positional(ENQUEUE_ENTITY_CHANGE_SQL);

interface Caller {
  partyId: number;
  accountId: number;
  permissions: Set<number>;
  exp: number;
}

const key: KeyObject = createPublicKey(
  readFileSync(join(process.env.DATA_DIR ?? '.data', 'keys', 'jwt-private.pem'), 'utf8'),
);
const verified = new Map<string, Caller>();

/** The caller of a valid access token of the API, or undefined. */
function callerOf(request: IncomingMessage): Caller | undefined {
  const token = /^Bearer (\S+)$/.exec(request.headers.authorization ?? '')?.[1];
  if (!token) return undefined;
  const now = Date.now() / 1000;
  const known = verified.get(token);
  if (known) return known.exp > now ? known : undefined;
  const [header, payload, signature] = token.split('.');
  if (!header || !payload || signature === undefined) return undefined;
  try {
    if (JSON.parse(Buffer.from(header, 'base64url').toString()).alg !== 'RS256') return undefined;
    const signed = Buffer.from(`${header}.${payload}`);
    if (!verify('sha256', signed, key, Buffer.from(signature, 'base64url'))) return undefined;
    const claims = JSON.parse(Buffer.from(payload, 'base64url').toString()) as Record<string, unknown>;
    if (claims.iss !== ISSUER || claims.aud !== AUDIENCE || !(Number(claims.exp) > now)) return undefined;
    if (claims.scope !== TokenScope.Platform || Number(claims.accountRole) === PartyType.Admin)
      return undefined;
    const caller = {
      partyId: Number(claims.partyId),
      accountId: Number(claims.sub),
      permissions: decodePermissions(String(claims.permissions)),
      exp: Number(claims.exp),
    };
    verified.set(token, caller);
    return caller;
  } catch {
    return undefined;
  }
}

const iso = (value: unknown) => (value instanceof Date ? value.toISOString() : (value ?? null));

/** The API's PropertyRead of a row. */
function present(row: Record<string, unknown>) {
  return {
    id: row.id,
    created: iso(row.created),
    lastModified: iso(row.last_modified),
    deleted: iso(row.deleted),
    partyId: row.party_id,
    name: row.name,
    street: row.street,
    houseNumber: row.house_number,
    postalCode: row.postal_code,
    city: row.city,
    country: row.country,
    propertyType: row.property_type,
    yearBuilt: row.year_built,
    notes: row.notes,
  };
}

const pool = new pg.Pool({ connectionString: process.env.DATABASE_URL, max: 10 });

async function list(caller: Caller, url: URL): Promise<[number, unknown]> {
  const pageSize = Number(url.searchParams.get('PageSize') ?? 20);
  const pageNumber = Number(url.searchParams.get('PageNumber') ?? 1);
  if (!(pageSize >= 1 && pageSize <= 100 && pageNumber >= 1)) return [400, null];
  const offset = (pageNumber - 1) * pageSize;
  const { rows } = await pool.query<Record<string, unknown>>(LIST, [caller.partyId, pageSize, offset]);
  const totalCount = Number(rows[0]?.total_count ?? 0);
  const totalPages = Math.ceil(totalCount / pageSize);
  return [
    200,
    {
      // past the last row the statement answers the count alone, on a row of nulls
      items: totalCount > offset ? rows.map(present) : [],
      pageNumber,
      pageSize,
      totalCount,
      totalPages,
      hasPreviousPage: pageNumber > 1,
      hasNextPage: pageNumber < totalPages,
    },
  ];
}

async function update(caller: Caller, id: number, body: Record<string, unknown>): Promise<[number, unknown]> {
  const sets: string[] = [];
  const values: unknown[] = [caller.partyId, id, new Date()];
  for (const [field, value] of Object.entries(body)) {
    const column = COLUMNS[field];
    if (!column) return [400, null];
    sets.push(`${column} = $${values.push(value)}`);
  }
  const client = await pool.connect();
  try {
    await client.query('begin');
    const { rows } = await client.query(
      `update properties set ${[...sets, 'last_modified = $3'].join(', ')}
        where properties.id = $2 and ${SCOPE} returning *`,
      values,
    );
    if (rows.length === 0) {
      await client.query('rollback');
      return [404, null];
    }
    const read = present(rows[0]);
    const bindings = enqueueBindings({
      entityName: 'Property',
      type: 2,
      entityId: id,
      entity: read,
      initiatorPartyId: caller.partyId,
      initiatorAccountId: caller.accountId,
    });
    await client.query(
      ENQUEUE.text,
      ENQUEUE.names.map((name) => bindings[name]),
    );
    await client.query('commit');
    return [200, read];
  } catch (error) {
    await client.query('rollback').catch(() => {});
    throw error;
  } finally {
    client.release();
  }
}

async function readBody(request: IncomingMessage): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const chunk of request) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks).toString();
}

async function handle(request: IncomingMessage): Promise<[number, unknown]> {
  const url = new URL(request.url ?? '/', 'http://bare');
  if (url.pathname === '/healthz') return [200, { status: 'ok' }];
  const caller = callerOf(request);
  if (!caller) return [401, null];
  if (request.method === 'GET' && url.pathname === '/api/properties') {
    return caller.permissions.has(READ) ? list(caller, url) : [403, null];
  }
  const id = /^\/api\/properties\/(\d+)$/.exec(url.pathname)?.[1];
  if (request.method === 'PATCH' && id) {
    if (!caller.permissions.has(UPDATE)) return [403, null];
    const body = JSON.parse((await readBody(request)) || 'null') as unknown;
    if (typeof body !== 'object' || body === null || Array.isArray(body)) return [400, null];
    return update(caller, Number(id), body as Record<string, unknown>);
  }
  return [404, null];
}

function respond(response: ServerResponse, status: number, body: unknown): void {
  const text = body === null ? '' : JSON.stringify(body);
  response.writeHead(status, {
    'content-type': 'application/json',
    'content-length': Buffer.byteLength(text),
  });
  response.end(text);
}

const server = createServer((request, response) => {
  handle(request).then(
    ([status, body]) => respond(response, status, body),
    (error: unknown) => {
      console.error(error);
      respond(response, 500, null);
    },
  );
});
server.keepAliveTimeout = 60_000;
server.listen(Number(process.argv[2] ?? 0), '127.0.0.1');

process.once('SIGTERM', () => {
  server.close();
  server.closeAllConnections();
  void pool.end().then(() => process.exit(0));
});
