/**
 * Secrets: webhook target credentials (Basic password, API key), signing secrets and
 * TOTP secrets are sealed at rest and shown at most once, at creation; passwords, recovery codes
 * and MFA recovery codes are stored only as hashes; none of them ever reaches the API's log.
 *
 * The checks are deliberately blunt: every row of every table is searched as text for each
 * plaintext, every answer of the API after creation is searched, and so is every log line the
 * API wrote at the most verbose level, including the log of a failure forced mid-request.
 *
 * The webhooks are really delivered: the real dispatcher process delivers them to a local target
 * that echoes each request (request line, every header, the body) in its answer, so the attempt
 * excerpt the dispatcher stores, and the attempts endpoint shows, holds whatever the dispatcher
 * sent: the Basic header, the API key, the bearer tokens it signs. That is the strongest case for
 * "no answer shows a credential": the dispatcher redacts them from what it stores.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { WebhookState, type WebhookRegistrationCreated } from '@platform/shared';
import {
  startDispatcher,
  startTestTarget,
  TEST_SECRET_KEY,
  waitForWebhook,
  type DispatcherProcess,
  type TargetScript,
  type TestTarget,
} from '@platform/testkit';
import { expectProblem, readJson } from '../support/http';
import { buildAccount, enrolMfa, login, testPrivateKeyPem, TEST_PASSWORD, useTestApi } from '../support/api';
import { captureLogger } from './security-test-support';

const logs = captureLogger();
// the dispatcher opens what the API sealed and signs bearer tokens with the API's key
const { api, world } = useTestApi({
  world: true,
  config: { SECRET_ENCRYPTION_KEY: TEST_SECRET_KEY.toString('base64') },
  logger: logs.logger,
});
let dispatcher: DispatcherProcess | undefined;
let target: TestTarget;

/** Every plaintext secret the tests create, to look for everywhere. */
const plaintexts = new Map<string, string>();
const BASIC_PASSWORD = 'Basic-Pass-Plain-4711';
const API_KEY = 'ApiKey-Plain-0815-xyz';
const NEW_PASSWORD = 'Fresh-Password-Plain-93!';
const RECOVERED_PASSWORD = 'Recovered-Password-Plain-57!';

/** `targetAuthorization` variants and their registrations, created in beforeAll. */
let basic: WebhookRegistrationCreated;
let apiKey: WebhookRegistrationCreated;
let bearer: WebhookRegistrationCreated;
let bearerInBody: WebhookRegistrationCreated;
/** The webhooks the dispatcher delivered (one per registration), each with one attempt. */
let delivered: number[];
let mfa: { secret: string; recoveryCodes: string[] };
let recoveryCode: string;
/** Who reads the webhook answers: both roles that may, and a reader with only the read permissions. */
let readers: [string, string][];

/**
 * The target: answers 200 with the request it got, as a debugging endpoint (or an error page that
 * quotes the request) does.
 */
const echo: TargetScript = (request) => ({
  body: [
    `${request.method} ${request.path}`,
    ...Object.entries(request.headers).map(([name, value]) => `${name}: ${String(value)}`),
    '',
    request.body,
  ].join('\n'),
});

/** POSTs a registration of `world.pmc` to Property creates with `targetAuthorization`; the response. */
function postRegistration(
  targetAuthorization: unknown,
  targetUrl = 'https://hooks.example.com/platform',
): Promise<Response> {
  return api.fetch('/api/webhook-registrations', {
    method: 'POST',
    token: world.pmc.full.token,
    json: { targetUrl, enabledEvents: [{ entityName: 'Property', type: 1 }], targetAuthorization },
  });
}

async function register(
  path: string,
  targetAuthorization: Record<string, unknown>,
): Promise<WebhookRegistrationCreated> {
  return readJson<WebhookRegistrationCreated>(
    await postRegistration(targetAuthorization, `${target.origin}${path}`),
  );
}

/** Tables and the plaintexts found in their rows (each row as text, every column). */
async function findInDatabase(needles: readonly string[]): Promise<string[]> {
  const { rows: tables } = await api.deps.knex.raw<{ rows: { name: string }[] }>(
    `select table_name as name from information_schema.tables
     where table_schema = 'public' and table_type = 'BASE TABLE'`,
  );
  // bytea columns print as hex, so look for the hex form too
  const forms = needles.flatMap((needle) => [needle, Buffer.from(needle).toString('hex')]);
  const found: string[] = [];
  for (const { name } of tables) {
    const { rows } = await api.deps.knex.raw<{ rows: { needle: string }[] }>(
      `select needle from unnest(?::text[]) as needle
       where exists (select 1 from ?? as t where position(needle in t::text) > 0)`,
      [forms, name],
    );
    for (const { needle } of rows) found.push(`${name}: ${needle}`);
  }
  return found;
}

/** The labels of the plaintexts `text` holds. */
const secretsIn = (text: string) =>
  [...plaintexts].filter(([, secret]) => text.includes(secret)).map(([label]) => label);

beforeAll(async () => {
  target = await startTestTarget(echo);
  basic = await register('/basic', { type: 1, username: 'hook-user', password: BASIC_PASSWORD });
  apiKey = await register('/api-key', { type: 4, apiKey: API_KEY });
  bearer = await register('/bearer-header', { type: 2 });
  bearerInBody = await register('/bearer-body', { type: 3 });
  plaintexts.set('Basic password', BASIC_PASSWORD);
  plaintexts.set('Basic header, as sent', Buffer.from(`hook-user:${BASIC_PASSWORD}`).toString('base64'));
  plaintexts.set('API key', API_KEY);
  for (const [label, created] of [
    ['signing secret (Basic)', basic],
    ['signing secret (API key)', apiKey],
    ['signing secret (bearer)', bearer],
    ['signing secret (bearer in body)', bearerInBody],
  ] as const) {
    plaintexts.set(label, created.signingSecret);
    plaintexts.set(`${label}, its key`, created.signingSecret.slice('whsec_'.length));
  }

  // a change that fans out to the registrations, delivered for real
  dispatcher = await startDispatcher(api.db.url, { JWT_PRIVATE_KEY: testPrivateKeyPem() });
  const property = await api.fetch('/api/properties', {
    method: 'POST',
    token: world.pmc.full.token,
    json: { name: 'Lindenhof', street: 'Lindenstraße 1', postalCode: '10969', city: 'Berlin' },
  });
  expect(property.status).toBe(200);
  delivered = await api.deps.knex('webhooks').orderBy('id').pluck('id');
  expect(delivered).toHaveLength(4);
  for (const id of delivered)
    await waitForWebhook(api.deps.knex, id, WebhookState.Successful, { attempts: 1 });
  // the tokens the dispatcher signed, as the target got them
  for (const request of target.requests) {
    const inHeader = /^Bearer (.+)$/.exec(String(request.headers.authorization ?? ''))?.[1];
    const inBody = (JSON.parse(request.body) as { platformSignedBearerToken?: string })
      .platformSignedBearerToken;
    for (const [where, token] of [
      ['in the header', inHeader],
      ['in the body', inBody],
    ] as const) {
      if (!token) continue;
      plaintexts.set(`bearer token, ${where}`, token);
      plaintexts.set(`bearer token, ${where}, its signature`, token.split('.')[2]!);
    }
  }
  expect(plaintexts.has('bearer token, in the header') && plaintexts.has('bearer token, in the body')).toBe(
    true,
  );

  // a TOTP secret and MFA recovery codes
  const { accessToken } = await login(api, world.broker.full.email);
  mfa = await enrolMfa(api, accessToken);
  plaintexts.set('TOTP secret', mfa.secret);
  mfa.recoveryCodes.forEach((code, i) => {
    plaintexts.set(`MFA recovery code ${i + 1}`, code);
    plaintexts.set(`MFA recovery code ${i + 1}, as typed`, code.replaceAll('-', ''));
  });

  // passwords: changed by the account, and set with a recovery code
  const { accessToken: userToken } = await login(api, world.user.full.email);
  const changed = await api.fetch(`/api/accounts/${world.user.full.id}/password`, {
    method: 'PUT',
    token: userToken,
    json: { currentPassword: TEST_PASSWORD, newPassword: NEW_PASSWORD },
  });
  expect(changed.status, await changed.clone().text()).toBe(200);
  plaintexts.set('a changed password', NEW_PASSWORD);
  plaintexts.set('the test password', TEST_PASSWORD);
  await api.fetch('/api/auth/recover-password', {
    method: 'POST',
    json: { email: world.insurer.full.email },
  });
  const mail = await api.deps
    .knex('mail_outbox')
    .where({ to_address: world.insurer.full.email })
    .orderBy('id', 'desc')
    .first('text_body');
  recoveryCode = /([A-Z2-9]{4}-[A-Z2-9]{4})/.exec(mail.text_body as string)![1]!;
  const recovered = await api.fetch('/api/auth/change-password-with-recovery-code', {
    method: 'PUT',
    json: { email: world.insurer.full.email, password: RECOVERED_PASSWORD, recoveryCode },
  });
  expect(recovered.status, await recovered.clone().text()).toBe(200);
  plaintexts.set('a recovered password', RECOVERED_PASSWORD);

  // logins: a right and a wrong password
  await login(api, world.user.full.email, NEW_PASSWORD);
  const wrong = await api.fetch('/api/auth/login', {
    method: 'POST',
    json: { email: world.user.full.email, password: `${NEW_PASSWORD}-wrong` },
  });
  expect(wrong.status).toBe(400);

  const reader = await buildAccount(api.deps, {
    partyId: world.pmc.id,
    permissions: ['Webhook.Read', 'WebhookRegistration.Read'],
  });
  readers = [
    ['PMC', world.pmc.full.token],
    ['PMC with only Webhook.Read and WebhookRegistration.Read', (await login(api, reader.email)).accessToken],
    ['Admin', world.admin.full.token],
  ];
}, 60_000);

afterAll(async () => {
  await dispatcher?.stop();
  await target?.close();
});

describe('target credentials and signing secrets at rest', () => {
  it('are stored sealed (AES-256-GCM, v1 format), and open to what was registered', async () => {
    const rows = await api.deps
      .knex('webhook_registrations')
      .whereIn('id', [basic.id, apiKey.id, bearer.id, bearerInBody.id])
      .orderBy('id')
      .select('auth_credentials', 'signing_secret');
    for (const row of rows) expect(row.signing_secret).toMatch(/^v1\.[\w-]+\.[\w-]+\.[\w-]+$/);
    expect(rows.map((row) => api.deps.secrets.open(row.signing_secret))).toEqual([
      basic.signingSecret,
      apiKey.signingSecret,
      bearer.signingSecret,
      bearerInBody.signingSecret,
    ]);
    expect(JSON.parse(api.deps.secrets.open(rows[0].auth_credentials))).toEqual({
      username: 'hook-user',
      password: BASIC_PASSWORD,
    });
    expect(JSON.parse(api.deps.secrets.open(rows[1].auth_credentials))).toEqual({ apiKey: API_KEY });
  });

  it('appear nowhere in the database in plain text: no column of any table holds one, the echoed excerpts included', async () => {
    const mfaAndCredentials = [...plaintexts.entries()].filter(([label]) => !/password$/.test(label));
    const labelOf = new Map(
      mfaAndCredentials.flatMap(([label, value]) => [
        [value, label],
        [Buffer.from(value).toString('hex'), `${label} (hex)`],
      ]),
    );
    const found = (await findInDatabase(mfaAndCredentials.map(([, value]) => value))).map((where) => {
      const [table, needle] = where.split(': ') as [string, string];
      return `${table}: ${labelOf.get(needle)}`;
    });
    // the attempt excerpts hold what the echoing target sent back, its credentials redacted
    expect(found).toEqual([]);
  });
});

describe('passwords and codes at rest', () => {
  it('passwords are argon2id hashes, and no password appears in plain text anywhere', async () => {
    const hashes = await api.deps.knex('accounts').whereNotNull('password_hash').pluck('password_hash');
    expect(hashes.length).toBeGreaterThan(10);
    for (const hash of hashes) expect(hash).toMatch(/^\$argon2id\$v=19\$m=\d+,t=\d+,p=\d+\$/);
    expect(await findInDatabase([TEST_PASSWORD, NEW_PASSWORD, RECOVERED_PASSWORD, BASIC_PASSWORD])).toEqual(
      [],
    );
  });

  it('password-recovery codes are argon2id hashes; the code is only in the mail that carried it', async () => {
    const codes = await api.deps.knex('recovery_codes').pluck('code_hash');
    expect(codes.length).toBeGreaterThan(0);
    for (const hash of codes) expect(hash).toMatch(/^\$argon2id\$/);
    const found = await findInDatabase([recoveryCode, recoveryCode.replace('-', '')]);
    expect(found.every((where) => where.startsWith('mail_outbox:'))).toBe(true);
  });

  it('MFA recovery codes are SHA-256 hashes, the TOTP secret is sealed', async () => {
    const hashes = await api.deps.knex('mfa_recovery_codes').pluck('code_hash');
    expect(hashes).toHaveLength(mfa.recoveryCodes.length);
    for (const hash of hashes) expect(hash).toMatch(/^[0-9a-f]{64}$/);
    const sealed = await api.deps.knex('accounts').where({ id: world.broker.full.id }).first('mfa_secret');
    expect(sealed.mfa_secret).toMatch(/^v1\./);
    expect(api.deps.secrets.open(sealed.mfa_secret)).toBe(mfa.secret);
  });
});

describe('no API answer after creation shows a secret', () => {
  /** Every read of registrations, webhooks and attempts, and the caller's own account. */
  const reads = (): [string, string, unknown?][] => [
    ['GET', '/api/webhook-registrations'],
    ['POST', '/api/webhook-registrations/search', { filters: [] }],
    ...[basic, apiKey, bearer, bearerInBody].map((created): [string, string] => [
      'GET',
      `/api/webhook-registrations/${created.id}`,
    ]),
    ['GET', '/api/webhooks'],
    ['POST', '/api/webhooks/search', { filters: [] }],
    ...delivered.flatMap((id): [string, string][] => [
      ['GET', `/api/webhooks/${id}`],
      ['GET', `/api/webhooks/${id}/attempts`],
    ]),
    ['GET', '/api/webhook-groups?blocked=true'],
    ['GET', '/api/webhook-stats'],
    ['GET', '/api/accounts/myself'],
  ];

  /** An answer's text, and the attempt excerpts (`responseBody`) it holds, taken out of it. */
  async function read(method: string, path: string, token: string, json?: unknown) {
    const response = await api.fetch(path, { method, token, ...(json === undefined ? {} : { json }) });
    const text = await response.text();
    expect(response.status, `${method} ${path}: ${text}`).toBe(200);
    if (!/\/attempts$/.test(path)) return { text, excerpts: [] };
    const page = JSON.parse(text) as { items: { responseBody: string | null }[] };
    const excerpts = page.items.map((item) => item.responseBody ?? '');
    for (const item of page.items) item.responseBody = null;
    return { text: JSON.stringify(page), excerpts };
  }

  it('neither the registration, webhook and attempt reads, for each reader, nor the registration update: no credential', async () => {
    for (const [reader, token] of readers) {
      for (const [method, path, json] of reads()) {
        const { text } = await read(method, path, token, json);
        expect(secretsIn(text), `${reader}: ${method} ${path}`).toEqual([]);
        expect(text, `${reader}: ${method} ${path}`).not.toMatch(
          /signingSecret|"password"|apiKey|credentials/i,
        );
      }
    }
    // the answer of an update, by the registration's owner
    for (const created of [basic, apiKey, bearer, bearerInBody]) {
      const { text } = await read('PATCH', `/api/webhook-registrations/${created.id}`, world.pmc.full.token, {
        targetUrl: `${target.origin}/moved`,
      });
      expect(secretsIn(text), `PATCH ${created.id}`).toEqual([]);
      expect(text).not.toMatch(/signingSecret|"password"|apiKey|credentials/i);
    }
    // the account whose MFA is on, reading itself
    const myself = await (await api.fetch('/api/accounts/myself', { token: world.broker.full.token })).text();
    expect(myself).toMatch(/"multiFactorEnabled":true/);
    expect(secretsIn(myself)).toEqual([]);
  });

  it('the attempt excerpt of a target that echoes its request shows [redacted] where the credentials were, to every reader', async () => {
    for (const [reader, token] of readers) {
      for (const id of delivered) {
        const { excerpts } = await read('GET', `/api/webhooks/${id}/attempts`, token);
        // the excerpt is the echo of this webhook's request, so the check below is not vacuous
        expect(excerpts, `${reader}: attempts of ${id}`).toHaveLength(1);
        expect(excerpts[0]).toContain(`webhook-id: ${id}`);
        expect(excerpts[0]).toContain('[redacted]');
        expect(secretsIn(excerpts[0]!), `${reader}: attempts of ${id}`).toEqual([]);
      }
    }
    // the reader with only the webhook read permissions may not list the party's properties, and
    // finds no token in the excerpts that would let it
    const [, narrowToken] = readers[1]!;
    expect((await api.fetch('/api/properties', { token: narrowToken })).status).toBe(403);
    for (const id of delivered) {
      const { excerpts } = await read('GET', `/api/webhooks/${id}/attempts`, narrowToken);
      expect(excerpts[0]).not.toMatch(/Bearer [\w-]+\.[\w-]+\.[\w-]+/);
    }
  });

  it('nor a refusal of a registration whose credentials break a rule', async () => {
    const cases = [
      { type: 4, apiKey: 'Refused Key Plain 1234' },
      { type: 1, username: 'a:b', password: 'Refused-Pass-Plain-1' },
      { type: 1, username: 'user', password: `Refused-Pass-Plain-2${'x'.repeat(300)}` },
      { type: 0, apiKey: 'Refused-Key-Plain-3' },
      { type: 2, username: 'u', password: 'Refused-Pass-Plain-4' },
    ];
    for (const targetAuthorization of cases) {
      const response = await postRegistration(targetAuthorization);
      const problem = await expectProblem(response, 400);
      expect(JSON.stringify(problem)).not.toMatch(/Refused[- ](Key|Pass)[- ]Plain/);
    }
  });
});

describe('the API’s log', () => {
  it('holds no secret, also when a registration fails mid-request and the failure is logged', async () => {
    // every insert of a registration fails at commit, so the API logs an unexpected error with
    // the request that caused it
    await api.deps.knex.raw(`
      create function refuse_registration() returns trigger language plpgsql as
        $$ begin raise exception 'refused by the test: %', row_to_json(new)::text; end $$;
      create constraint trigger refuse_registration after insert on webhook_registrations
        deferrable initially deferred for each row execute function refuse_registration();
    `);
    const linesBefore = logs.lines.length;
    try {
      const response = await postRegistration({
        type: 1,
        username: 'hook-user',
        password: 'Logged-Pass-Plain-66',
      });
      expect(response.status).toBe(500);
    } finally {
      await api.deps.knex.raw(
        'drop trigger refuse_registration on webhook_registrations; drop function refuse_registration();',
      );
    }
    const failure = logs.lines.slice(linesBefore).join('\n');
    // the row the database saw, and so the error it raised, held the sealed value only
    expect(failure).toMatch(/refused by the test/);
    expect(failure).toMatch(/auth_credentials/);
    expect(failure).not.toContain('Logged-Pass-Plain-66');

    const everything = logs.lines.join('\n');
    expect(logs.lines.length).toBeGreaterThan(0);
    expect(secretsIn(everything)).toEqual([]);
    // nor the log of the dispatcher that delivered (apps/dispatcher/src/secrets-in-logs.test.ts
    // tries it much harder)
    expect(dispatcher!.output.length).toBeGreaterThan(0);
    expect(secretsIn(dispatcher!.output)).toEqual([]);
  });
});
