import { Agent, request } from 'undici';
import { hashPassword } from '../apps/api/src/auth/passwords';
import type { Knex } from '@platform/db';
import { seedParty } from './seed';

const PASSWORD = 'Bench-Password-1!';

/** A Property Management Company with one account holding every permission; answers its login. */
export async function seedBenchAccount(knex: Knex): Promise<{ email: string; password: string }> {
  const partyId = await seedParty(knex);
  const [group] = await knex('account_groups').insert({ party_id: partyId, name: 'Bench' }).returning('id');
  await knex.raw(
    'insert into account_group_permissions (group_id, permission_id) select ?, id from permissions',
    [group.id],
  );
  const email = 'bench@example.com';
  await knex('accounts').insert({
    party_id: partyId,
    group_id: group.id,
    email,
    password_hash: await hashPassword(PASSWORD),
  });
  return { email, password: PASSWORD };
}

/** A JSON client of the API over a keep-alive pool of `connections`, signed in once. */
export interface ApiClient {
  /** Sends a request; answers its status and parsed JSON body (null when empty). */
  send(
    method: 'GET' | 'POST' | 'PATCH',
    path: string,
    json?: unknown,
  ): Promise<{ status: number; body: unknown }>;
  /** Like `send`, but a status of 300 or more throws. */
  call(method: 'GET' | 'POST' | 'PATCH', path: string, json?: unknown): Promise<Record<string, unknown>>;
  /** The bearer token it sends (empty: none). */
  token: string;
  close(): Promise<void>;
}

/** A client of `baseUrl` sending `token` (none when empty) over a keep-alive pool of `connections`. */
export function connect(baseUrl: string, connections: number, token = ''): ApiClient {
  const agent = new Agent({ connections, keepAliveTimeout: 30_000 });
  const send: ApiClient['send'] = async (method, path, json) => {
    const response = await request(`${baseUrl}${path}`, {
      method,
      dispatcher: agent,
      headers: {
        ...(json === undefined ? {} : { 'content-type': 'application/json' }),
        ...(token ? { authorization: `Bearer ${token}` } : {}),
      },
      ...(json === undefined ? {} : { body: JSON.stringify(json) }),
    });
    const text = await response.body.text();
    return { status: response.statusCode, body: text ? (JSON.parse(text) as unknown) : null };
  };
  const call: ApiClient['call'] = async (method, path, json) => {
    const { status, body } = await send(method, path, json);
    if (status >= 300) throw new Error(`${method} ${path}: ${status} ${JSON.stringify(body)}`);
    return body as Record<string, unknown>;
  };
  return { token, send, call, close: () => agent.close() };
}

/** Signs `account` in at the API; answers a client sending its access token. */
export async function signIn(
  baseUrl: string,
  account: { email: string; password: string },
  connections: number,
): Promise<ApiClient> {
  const anonymous = connect(baseUrl, 1);
  try {
    const { accessToken } = await anonymous.call('POST', '/api/auth/login', account);
    return connect(baseUrl, connections, accessToken as string);
  } finally {
    await anonymous.close();
  }
}

/** Creates `count` properties through the API; answers their ids. */
export async function createProperties(call: ApiClient['call'], count: number): Promise<number[]> {
  const ids: number[] = [];
  for (let i = 1; i <= count; i++) {
    const created = await call('POST', '/api/properties', {
      name: `Bench property ${i}`,
      street: 'Benchmarkstraße',
      postalCode: '10115',
      city: 'Berlin',
    });
    ids.push(created.id as number);
  }
  return ids;
}
