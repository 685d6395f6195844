import { spawn, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { createServer, type IncomingHttpHeaders, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import {
  createSecretBox,
  enqueueEntityChange,
  notifyWebhookDue,
  type EntityChangeInput,
  type Knex,
} from '@platform/db';
import { freePort } from '@platform/db/testing';

const ROOT = resolve(import.meta.dirname, '../../..');

/** Polls `check` until it returns true, failing with `what` after `timeoutMs`. */
export async function eventually(
  check: () => Promise<boolean> | boolean,
  options: { timeoutMs?: number; what?: string } = {},
): Promise<void> {
  const { timeoutMs = 20_000, what = 'condition' } = options;
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    if (
      await Promise.resolve()
        .then(check)
        .catch(() => false)
    )
      return;
    if (Date.now() > deadline) throw new Error(`${what} not met within ${timeoutMs} ms`);
    await new Promise((r) => setTimeout(r, 25));
  }
}

// ---------------------------------------------------------------------------------------------
// The target: a recording HTTP server on 127.0.0.1 that answers each request as a script says.

/** One request the target received. */
export interface ReceivedRequest {
  /** 1-based order of arrival at this target. */
  index: number;
  method: string;
  path: string;
  headers: IncomingHttpHeaders;
  body: string;
  /** The Standard Webhooks `webhook-id` header. */
  webhookId: string | undefined;
  /** `Date.now()` when the whole body had arrived. */
  receivedAt: number;
  /** `Date.now()` when the answer was sent (or the socket destroyed); undefined until then. */
  answeredAt?: number;
}

/**
 * How the target answers one request: a status (default 200) with headers and body after an
 * optional delay; `reset` destroys the connection without answering; `hang` never answers;
 * `hangAfterHeaders` sends the status line and headers, then nothing more.
 */
export type TargetAnswer =
  | {
      status?: number;
      headers?: Record<string, string>;
      body?: string | Buffer;
      delayMs?: number;
    }
  | { reset: true }
  | { hang: true }
  | { hangAfterHeaders: true; status?: number }
  /** Answers by hand, for anything the shapes above cannot say. */
  | { handle(response: ServerResponse): void };

export type TargetScript = (request: ReceivedRequest) => TargetAnswer | Promise<TargetAnswer>;

export interface TestTarget {
  /** `http://<host>:<port>/hook`. */
  url: string;
  /** `http://<host>:<port>`, for other paths. */
  origin: string;
  /** Every request so far, in order of arrival. */
  readonly requests: ReceivedRequest[];
  /** TCP connections accepted so far. */
  readonly connections: number;
  /** How requests are answered from now on; replaceable at any time. */
  script: TargetScript;
  /** The requests carrying `webhook-id` = `id`, in order of arrival. */
  requestsFor(id: number | string): ReceivedRequest[];
  /** Resolves once `count` requests for webhook `id` have been answered (or reset). */
  waitForAnswered(id: number | string, count?: number, timeoutMs?: number): Promise<ReceivedRequest[]>;
  close(): Promise<void>;
}

/** The parsed JSON body of a delivery. */
export function bodyOf<T = { entity: Record<string, unknown>; event: Record<string, unknown> }>(
  request: ReceivedRequest,
): T {
  return JSON.parse(request.body) as T;
}

/**
 * Starts a target on a free port of `options.host` (127.0.0.1 unless told); by default every
 * request gets a 200 `ok`.
 */
export async function startTestTarget(
  script: TargetScript = () => ({}),
  options: { host?: string } = {},
): Promise<TestTarget> {
  const host = options.host ?? '127.0.0.1';
  const requests: ReceivedRequest[] = [];
  const sockets = new Set<Socket>();
  const server: Server = createServer((incoming, response) => {
    const chunks: Buffer[] = [];
    incoming.on('data', (chunk: Buffer) => chunks.push(chunk));
    incoming.on('end', () => {
      const request: ReceivedRequest = {
        index: requests.length + 1,
        method: incoming.method ?? '',
        path: incoming.url ?? '',
        headers: incoming.headers,
        body: Buffer.concat(chunks).toString('utf8'),
        webhookId: incoming.headers['webhook-id'] as string | undefined,
        receivedAt: Date.now(),
      };
      requests.push(request);
      void Promise.resolve()
        .then(() => target.script(request))
        .then(async (answer) => {
          if ('reset' in answer) {
            request.answeredAt = Date.now();
            incoming.socket.destroy();
            return;
          }
          if ('hang' in answer) return;
          if ('handle' in answer) {
            answer.handle(response);
            return;
          }
          if ('hangAfterHeaders' in answer) {
            response.writeHead(answer.status ?? 200, { 'content-type': 'text/plain' });
            response.write('partial');
            response.flushHeaders();
            return;
          }
          if (answer.delayMs) await new Promise((r) => setTimeout(r, answer.delayMs));
          response.writeHead(answer.status ?? 200, { 'content-type': 'text/plain', ...answer.headers });
          // stamped before sending, so a request that the answer made possible cannot seem earlier
          request.answeredAt = Date.now();
          response.end(answer.body ?? 'ok');
        })
        .catch((error: unknown) => {
          request.answeredAt = Date.now();
          response.destroy(error as Error);
        });
    });
  });
  let connections = 0;
  server.on('connection', (socket) => {
    connections++;
    sockets.add(socket);
    socket.on('close', () => sockets.delete(socket));
  });
  await new Promise<void>((r) => server.listen(0, host, r));
  const origin = `http://${host.includes(':') ? `[${host}]` : host}:${(server.address() as AddressInfo).port}`;
  const requestsFor = (id: number | string) => requests.filter((r) => r.webhookId === String(id));
  const target: TestTarget = {
    url: `${origin}/hook`,
    origin,
    requests,
    get connections() {
      return connections;
    },
    script,
    requestsFor,
    waitForAnswered: async (id, count = 1, timeoutMs = 20_000) => {
      await eventually(() => requestsFor(id).filter((r) => r.answeredAt !== undefined).length >= count, {
        timeoutMs,
        what: `${count} answered request(s) for webhook ${id}`,
      });
      return requestsFor(id);
    },
    close: async () => {
      // hanging requests would keep close() waiting forever
      for (const socket of sockets) socket.destroy();
      await new Promise((r) => server.close(r));
    },
  };
  return target;
}

/** A URL on 127.0.0.1 where nothing listens (a port that was just free). */
export async function refusingUrl(): Promise<string> {
  return `http://127.0.0.1:${await freePort()}/hook`;
}

// ---------------------------------------------------------------------------------------------
// Seeding through the queue SQL.

/** The key the seeded secrets are sealed with; handed to the dispatcher process. */
export const TEST_SECRET_KEY = randomBytes(32);
/** Seals and opens secrets as the dispatcher started by `startDispatcher` does. */
export const testSecrets = createSecretBox(TEST_SECRET_KEY);

export interface SeedRegistrationOptions {
  partyId: number;
  targetUrl: string;
  shouldGroup?: boolean;
  shouldGroupContinueAfterFail?: boolean;
  /** WebhookAuthType, 0 by default. */
  authType?: number;
  /** `{ username, password }` or `{ apiKey }`, sealed as the API seals them. */
  credentials?: Record<string, string>;
  /** Subscribed (entityName, type) pairs; every Property event by default. */
  events?: { entityName: string; type: number }[];
}

/**
 * Inserts a registration and its events as the API's create does, credentials and signing secret
 * sealed with TEST_SECRET_KEY. Answers its id and the plain signing secret.
 */
export async function seedRegistration(
  knex: Knex,
  options: SeedRegistrationOptions,
): Promise<{ id: number; signingSecret: string }> {
  const signingSecret = `whsec_${randomBytes(32).toString('base64')}`;
  const events = options.events ?? [1, 2, 3].map((type) => ({ entityName: 'Property', type }));
  return knex.transaction(async (trx) => {
    const [row] = (await trx('webhook_registrations')
      .insert({
        party_id: options.partyId,
        target_url: options.targetUrl,
        should_group: options.shouldGroup ?? false,
        should_group_continue_after_fail: options.shouldGroupContinueAfterFail ?? false,
        auth_type: options.authType ?? 0,
        auth_credentials: options.credentials ? testSecrets.seal(JSON.stringify(options.credentials)) : null,
        signing_secret: testSecrets.seal(signingSecret),
      })
      .returning('id')) as { id: number }[];
    await trx('webhook_events').insert(
      events.map((event) => ({ registration_id: row!.id, entity_name: event.entityName, type: event.type })),
    );
    return { id: row!.id, signingSecret };
  });
}

/**
 * Records one entity change through the queue's enqueue statement, as the API's write path does,
 * and answers the ids of the webhooks it fanned out to. `notify: false` leaves out the NOTIFY, so
 * only the dispatcher's own timer or poll can find them.
 */
export async function seedChange(
  knex: Knex,
  change: EntityChangeInput,
  options: { notify?: boolean } = {},
): Promise<number[]> {
  return knex.transaction(async (trx) => {
    const created = await enqueueEntityChange(trx, change);
    if (created > 0 && options.notify !== false) await notifyWebhookDue(trx);
    const rows = (await trx('webhooks')
      .where('entity_change_id', trx.raw(`currval('entity_changes_id_seq')`))
      .orderBy('id')
      .select('id')) as { id: number }[];
    return rows.map((r) => r.id);
  });
}

/** A Property change of `partyId` whose entity carries `extra` (a marker for the target's script). */
export function propertyChange(
  partyId: number,
  entityId: number,
  extra: Record<string, unknown> = {},
  type: 1 | 2 | 3 = 2,
): EntityChangeInput {
  return {
    entityName: 'Property',
    type,
    entityId,
    entity: { id: entityId, name: `Property ${entityId}`, ...extra },
    initiatorPartyId: partyId,
    initiatorAccountId: null,
  };
}

// ---------------------------------------------------------------------------------------------
// Reading what the dispatcher wrote.

export interface WebhookRow {
  id: number;
  registration_id: number;
  state: number;
  attempt_count: number;
  next_attempt_at: Date;
  completed_at: Date | null;
  locked_by: string | null;
  group_key: string | null;
  group_seq: number | null;
}

export interface AttemptRow {
  number: number;
  started_at: Date;
  duration_ms: number;
  status_code: number | null;
  error_kind: string | null;
  response_body: string | null;
}

/** A webhook row straight from the table. */
export async function webhookRow(knex: Knex, id: number): Promise<WebhookRow> {
  return (await knex('webhooks')
    .where({ id })
    .first(
      'id',
      'registration_id',
      'state',
      'attempt_count',
      'next_attempt_at',
      'completed_at',
      'locked_by',
      'group_key',
      'group_seq',
    )) as WebhookRow;
}

/** The attempts of a webhook, oldest first. */
export function attemptsOf(knex: Knex, id: number): Promise<AttemptRow[]> {
  return knex('webhook_attempts')
    .where({ webhook_id: id })
    .orderBy('number')
    .select('number', 'started_at', 'duration_ms', 'status_code', 'error_kind', 'response_body');
}

/** Waits until webhook `id` is in `state` (and, if given, has `attempts` attempt rows); answers the row. */
export async function waitForWebhook(
  knex: Knex,
  id: number,
  state: number,
  options: { attempts?: number; timeoutMs?: number } = {},
): Promise<WebhookRow> {
  let last: WebhookRow | undefined;
  try {
    await eventually(
      async () => {
        last = await webhookRow(knex, id);
        if (last.state !== state) return false;
        if (options.attempts === undefined) return true;
        return (await attemptsOf(knex, id)).length === options.attempts;
      },
      { timeoutMs: options.timeoutMs ?? 20_000, what: `webhook ${id} in state ${state}` },
    );
  } catch (error) {
    throw new Error(`${(error as Error).message}; last seen: ${JSON.stringify(last)}`);
  }
  return last!;
}

// ---------------------------------------------------------------------------------------------
// The real dispatcher process.

export interface DispatcherProcess {
  /** Its status port (`/healthz`, `/metrics`). */
  port: number;
  /** Its JSON log lines, parsed, in order. */
  readonly logs: Record<string, unknown>[];
  /** Everything it wrote to stdout and stderr so far, raw (log lines or not), in order of arrival. */
  readonly output: string;
  /** Resolves with the exit code once the process has exited and its output is drained. */
  readonly exited: Promise<number | null>;
  /** SIGTERM, then SIGKILL if it has not exited within 10 s; answers the exit code. */
  stop(): Promise<number | null>;
}

/**
 * Spawns the real dispatcher (`tsx apps/dispatcher/src/main.ts`) against `databaseUrl`, sharing
 * TEST_SECRET_KEY with `seedRegistration`, with private targets allowed (targets live on
 * 127.0.0.1) and `env` on top (e.g. `WEBHOOK_RETRY_SCHEDULE`, `WEBHOOK_TIMEOUT`,
 * `DISPATCHER_POLL_INTERVAL`). A variable given as undefined is left unset, so
 * `{ ALLOW_PRIVATE_TARGETS: undefined }` leaves the choice to the dispatcher's own default.
 * Resolves once its LISTEN connection is up.
 */
export async function startDispatcher(
  databaseUrl: string,
  env: Record<string, string | undefined> = {},
): Promise<DispatcherProcess> {
  const port = await freePort();
  // its own data folder, so keys it may generate never land in the developer's .data
  const dataDir = mkdtempSync(join(tmpdir(), 'dispatcher-test-'));
  const childEnv: Record<string, string | undefined> = {
    ...process.env,
    NODE_ENV: 'test',
    LOG_LEVEL: 'debug',
    DATABASE_URL: databaseUrl,
    DISPATCHER_PORT: String(port),
    DATA_DIR: dataDir,
    SECRET_ENCRYPTION_KEY: TEST_SECRET_KEY.toString('base64'),
    ALLOW_PRIVATE_TARGETS: 'true',
    ...env,
  };
  // spawn would hand an undefined value over as the string "undefined"
  for (const [name, value] of Object.entries(childEnv)) if (value === undefined) delete childEnv[name];
  const child: ChildProcess = spawn(resolve(ROOT, 'node_modules/.bin/tsx'), ['apps/dispatcher/src/main.ts'], {
    cwd: ROOT,
    env: childEnv,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const logs: Record<string, unknown>[] = [];
  let output = '';
  let pending = '';
  child.stdout!.on('data', (chunk: Buffer) => {
    output += chunk.toString();
    const parts = (pending + chunk.toString()).split('\n');
    pending = parts.pop()!;
    for (const line of parts) {
      if (!line.startsWith('{')) continue;
      try {
        logs.push(JSON.parse(line) as Record<string, unknown>);
      } catch {
        // not a log line
      }
    }
  });
  child.stderr!.on('data', (chunk: Buffer) => {
    output += chunk.toString();
    process.stderr.write(chunk);
  });
  // 'close' comes after stdout is drained, so the last log lines are in by then
  const exited = new Promise<number | null>((resolveExit) =>
    child.once('close', (code) => {
      rmSync(dataDir, { recursive: true, force: true });
      resolveExit(code);
    }),
  );
  const stop = async () => {
    if (child.exitCode === null && child.signalCode === null) {
      // SIGTERM first: tsx relays it, while a SIGKILLed tsx would orphan the dispatcher under it
      child.kill('SIGTERM');
      const timer = setTimeout(() => child.kill('SIGKILL'), 10_000);
      await exited;
      clearTimeout(timer);
    }
    return exited;
  };
  try {
    await eventually(
      async () => {
        // a dispatcher that died at start-up (bad config) will never listen
        if (child.exitCode !== null) return true;
        const response = await fetch(`http://127.0.0.1:${port}/healthz`);
        return response.status === 200;
      },
      { timeoutMs: 30_000, what: 'the dispatcher listening' },
    );
    if (child.exitCode !== null) throw new Error(`the dispatcher exited at start-up with ${child.exitCode}`);
  } catch (error) {
    await stop();
    throw error;
  }
  return {
    port,
    logs,
    get output() {
      return output;
    },
    exited,
    stop,
  };
}
