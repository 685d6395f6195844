/**
 * Secrets, the dispatcher's side: it opens registration credentials and signing secrets
 * and signs bearer tokens to deliver, and none of them, in any form, ever reaches its output.
 *
 * The real dispatcher process runs at LOG_LEVEL=trace, and every byte it writes to stdout and
 * stderr is kept. Registrations of every authorization type (each has a signing secret; Basic and
 * API key carry credentials, the bearer types a token the dispatcher signs) get deliveries that
 * succeed, fail with a status, are redirected, time out, find nothing listening, and cannot be
 * prepared (credentials or a signing secret that do not open, credentials that are not JSON, a
 * bearer token that cannot be signed). Then, with a target that echoes every request (headers and
 * body) in its answer, the database refuses the result write, so the dispatcher logs the failed
 * write of those answers (their credentials already redacted, as the attempt rows show). The whole output is searched for each secret as
 * it is, base64, base64url and hex, and for the Basic header value. There is no auth type that
 * fetches a token from an endpoint (2 and 3 are signed by the dispatcher itself), so "the token
 * endpoint fails" has no counterpart; the bearer preparation failure here is the signature.
 */
import { generateKeyPairSync, randomBytes } from 'node:crypto';
import { createSecretBox } from '@platform/crypto';
import {
  attemptsOf,
  createTestDatabase,
  type DispatcherProcess,
  eventually,
  propertyChange,
  refusingUrl,
  seedChange,
  seedParty,
  seedRegistration,
  startDispatcher,
  startTestTarget,
  TEST_SECRET_KEY,
  type TestDatabase,
  testSecrets,
  type TestTarget,
  webhookRow,
} from '@platform/testkit';
import { WebhookAuthType, WebhookState } from '@platform/shared';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createLogger } from './logger';

const TIMEOUT_MS = 1_000;
const AUTH_TYPES = [
  WebhookAuthType.NoAuth,
  WebhookAuthType.BasicAuth,
  WebhookAuthType.PlatformBearerInHeader,
  WebhookAuthType.PlatformBearerInBody,
  WebhookAuthType.TargetApiToken,
] as const;
/** How each delivery of the first change goes, and the error kind its attempts record. */
const OUTCOMES = {
  ok: null,
  status: 'status',
  redirect: 'redirect',
  timeout: 'timeout',
  refused: 'connection-refused',
} as const;
type Outcome = keyof typeof OUTCOMES;

/** Every secret the test creates or learns, by label, to look for in the output. */
const secrets = new Map<string, string>();
/** A secret of its own, remembered for the search. */
function secret(
  label: string,
  text = `${label.replace(/[^A-Za-z0-9]+/g, '-')}-${randomBytes(12).toString('base64url')}`,
): string {
  secrets.set(label, text);
  return text;
}

/** The forms a secret could be written in: itself, base64, base64url and hex of its bytes. */
function forms(text: string): string[] {
  const bytes = Buffer.from(text);
  return [text, bytes.toString('base64'), bytes.toString('base64url'), bytes.toString('hex')];
}

/** Each form of each secret found in `output`, as `label (form)`. */
function leaks(output: string): string[] {
  const found: string[] = [];
  for (const [label, text] of secrets) {
    for (const form of new Set(forms(text))) if (output.includes(form)) found.push(`${label} (${form})`);
  }
  return found;
}

/** The signing secret of a registration and the forms of its key part. */
function rememberSigningSecret(label: string, signingSecret: string): void {
  secret(`${label} signing secret`, signingSecret);
  const keyPart = signingSecret.replace(/^whsec_/, '');
  secret(`${label} signing key (base64)`, keyPart);
  // the key bytes, as base64url and hex; `forms` of a string would encode its characters instead
  const key = Buffer.from(keyPart, 'base64');
  secret(`${label} signing key (base64url)`, key.toString('base64url'));
  secret(`${label} signing key (hex)`, key.toString('hex'));
}

describe('the dispatcher’s output holds no target credential', () => {
  let db: TestDatabase;
  let dispatcher: DispatcherProcess | undefined;
  const targets: TestTarget[] = [];

  beforeAll(async () => {
    db = await createTestDatabase();
  });
  afterAll(async () => {
    await dispatcher?.stop();
    for (const target of targets) await target.close();
    await db?.drop();
  });

  /** A party of its own; answers its id. */
  async function party(name: string): Promise<number> {
    return seedParty(db.knex, name);
  }

  /** Credentials of `authType` whose secrets are remembered under `label`. */
  function credentialsFor(authType: number, label: string): Record<string, string> | undefined {
    if (authType === WebhookAuthType.BasicAuth) {
      const username = `user-${randomBytes(4).toString('hex')}`;
      const password = secret(`${label} password`);
      // what the Authorization header carries
      secret(`${label} Basic header`, Buffer.from(`${username}:${password}`).toString('base64'));
      return { username, password };
    }
    if (authType === WebhookAuthType.TargetApiToken) return { apiKey: secret(`${label} API key`) };
    return undefined;
  }

  /** A registration of `partyId` at `targetUrl` whose secrets are remembered under `label`. */
  async function register(
    partyId: number,
    authType: number,
    targetUrl: string,
    label: string,
  ): Promise<number> {
    const { id, signingSecret } = await seedRegistration(db.knex, {
      partyId,
      targetUrl,
      authType,
      credentials: credentialsFor(authType, label),
    });
    rememberSigningSecret(label, signingSecret);
    return id;
  }

  it('at trace level, over every authorization type and every way a delivery ends, also when its result cannot be written', async () => {
    // The target of the first change answers by path; the redirect points at a live target that
    // must never be asked (a followed redirect would hand the credentials to another origin).
    const witness = await startTestTarget();
    targets.push(witness);
    const main = await startTestTarget((request) => {
      if (request.path.startsWith('/status')) return { status: 500, body: 'failed' };
      if (request.path.startsWith('/redirect')) return { status: 307, headers: { location: witness.url } };
      if (request.path.startsWith('/timeout')) return { hang: true };
      return { status: 200 };
    });
    targets.push(main);
    // the target of the second change answers 200 with everything it was sent
    const echo = await startTestTarget((request) => ({
      status: 200,
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ headers: request.headers, body: request.body }),
    }));
    targets.push(echo);
    const refused = await refusingUrl();
    const urlFor = (outcome: Outcome, label: string) =>
      outcome === 'refused' ? refused : `${main.origin}/${outcome}/${encodeURIComponent(label)}`;

    // --- the first change: every authorization type × every outcome, and unpreparable deliveries
    const first = await party('Secrets A');
    /** Registration id → what its attempts must record. */
    const expected = new Map<number, { label: string; errorKind: string | null }>();
    for (const authType of AUTH_TYPES) {
      for (const [outcome, errorKind] of Object.entries(OUTCOMES) as [Outcome, string | null][]) {
        const label = `type ${authType} ${outcome}`;
        expected.set(await register(first, authType, urlFor(outcome, label), label), { label, errorKind });
      }
    }
    const otherBox = createSecretBox(randomBytes(32));
    /** Registrations whose delivery cannot be prepared, and how they are broken. */
    const unpreparable: { label: string; authType: number; breakIt: (id: number) => Promise<void> }[] = [
      {
        // sealed with another key (a rotated or wrong SECRET_ENCRYPTION_KEY)
        label: 'type 0 signing secret of another key',
        authType: WebhookAuthType.NoAuth,
        breakIt: async (id) => {
          const signingSecret = `whsec_${randomBytes(32).toString('base64')}`;
          rememberSigningSecret('type 0 other-key', signingSecret);
          await db
            .knex('webhook_registrations')
            .where({ id })
            .update({ signing_secret: otherBox.seal(signingSecret) });
        },
      },
      ...[WebhookAuthType.BasicAuth, WebhookAuthType.TargetApiToken].flatMap((authType) => [
        {
          label: `type ${authType} credentials of another key`,
          authType,
          breakIt: async (id: number) => {
            const sealed = otherBox.seal(
              JSON.stringify(credentialsFor(authType, `type ${authType} other-key`)),
            );
            await db.knex('webhook_registrations').where({ id }).update({ auth_credentials: sealed });
          },
        },
        {
          // not JSON: JSON.parse quotes what it could not read (up to about ten characters), so
          // the plaintext is short enough to be quoted whole
          label: `type ${authType} credentials not JSON`,
          authType,
          breakIt: async (id: number) => {
            const plaintext = secret(
              `type ${authType} not-JSON credential`,
              `Pw${randomBytes(4).toString('hex')}`,
            );
            await db
              .knex('webhook_registrations')
              .where({ id })
              .update({ auth_credentials: testSecrets.seal(plaintext) });
          },
        },
      ]),
      ...[WebhookAuthType.PlatformBearerInHeader, WebhookAuthType.PlatformBearerInBody].map((authType) => ({
        // the party is gone, so no token can be signed for it
        label: `type ${authType} token of a missing party`,
        authType,
        breakIt: async (id: number) => {
          await db
            .knex('webhook_registrations')
            .where({ id })
            .update({ party_id: 2_000_000_000 + authType });
        },
      })),
    ];
    const broken: { id: number; breakIt: (id: number) => Promise<void> }[] = [];
    for (const { label, authType, breakIt } of unpreparable) {
      const url = `${main.origin}/unpreparable/${encodeURIComponent(label)}`;
      const id = await register(first, authType, url, label);
      expected.set(id, { label, errorKind: 'internal' });
      broken.push({ id, breakIt });
    }
    // webhooks are written for the registrations as they are; then they are broken (the party of
    // a registration, and of the endpoint it moves to, can only go missing without their foreign
    // keys)
    const firstIds = await seedChange(db.knex, propertyChange(first, 1));
    expect(firstIds).toHaveLength(expected.size);
    const { rows: foreignKeys } = await db.knex.raw<{ rows: { name: string; table: string }[] }>(
      `select conname as name, conrelid::regclass::text as table from pg_constraint
        where conrelid in ('webhook_registrations'::regclass, 'webhook_targets'::regclass) and contype = 'f'
          and confrelid = 'parties'::regclass`,
    );
    expect(foreignKeys).toHaveLength(2);
    for (const { name, table } of foreignKeys)
      await db.knex.raw('alter table ?? drop constraint ??', [table, name]);
    for (const { id, breakIt } of broken) await breakIt(id);

    // the dispatcher signs with a key we know, so we can look for it too
    const jwtKey = generateKeyPairSync('rsa', { modulusLength: 2048 }).privateKey.export({
      type: 'pkcs8',
      format: 'pem',
    }) as string;
    for (const [i, line] of jwtKey.split('\n').entries()) {
      if (/^[A-Za-z0-9+/=]{40,}$/.test(line)) secrets.set(`JWT private key, line ${i}`, line);
    }
    secrets.set('secret encryption key (base64)', TEST_SECRET_KEY.toString('base64'));
    secrets.set('secret encryption key (hex)', TEST_SECRET_KEY.toString('hex'));

    const started = Date.now();
    dispatcher = await startDispatcher(db.url, {
      LOG_LEVEL: 'trace',
      JWT_PRIVATE_KEY: jwtKey,
      WEBHOOK_TIMEOUT: `${TIMEOUT_MS}ms`,
      // two attempts: a failure is logged as Retrying (info), then as Failed (warn)
      WEBHOOK_RETRY_SCHEDULE: '0ms,200ms',
      DISPATCHER_POLL_INTERVAL: '1s',
      // every authorization type fails at the same two origins (the refusing port; 500s and
      // timeouts at the main target): a breaker opening at the default 5 would record some of
      // them as circuit-open instead of the error kind this test looks at
      DISPATCHER_BREAKER_FAILURES: '1000',
    });
    const running = dispatcher;

    const isFinal = async (id: number) =>
      ([WebhookState.Successful, WebhookState.Failed] as WebhookState[]).includes(
        (await webhookRow(db.knex, id)).state,
      );
    await eventually(async () => (await Promise.all(firstIds.map(isFinal))).every(Boolean), {
      timeoutMs: 30_000,
      what: 'every webhook of the first change final',
    });
    for (const id of firstIds) {
      const row = await webhookRow(db.knex, id);
      const { label, errorKind } = expected.get(row.registration_id)!;
      const attempts = await attemptsOf(db.knex, id);
      expect(
        attempts.map((attempt) => attempt.error_kind),
        label,
      ).toEqual(errorKind === null ? [null] : [errorKind, errorKind]);
      expect(row.state, label).toBe(errorKind === null ? WebhookState.Successful : WebhookState.Failed);
    }
    expect(witness.requests, 'a redirect was followed').toHaveLength(0);
    // a delivery that could not be prepared sent nothing
    expect(main.requests.filter((request) => request.path.startsWith('/unpreparable'))).toHaveLength(0);

    // --- the second change: an echoing target, and the database refusing the result write
    const second = await party('Secrets B');
    for (const authType of AUTH_TYPES) {
      await register(second, authType, `${echo.origin}/echo/${authType}`, `type ${authType} echo`);
    }
    await db.knex.raw(`
      create function refuse_attempt() returns trigger language plpgsql as
        $$ begin raise exception 'result write refused by the test'; end $$;
      create trigger refuse_attempt before insert on webhook_attempts
        for each row execute function refuse_attempt();
    `);
    const writeFailures = () => running.logs.filter((line) => line.msg === 'writing results failed').length;
    let secondIds: number[];
    try {
      secondIds = await seedChange(db.knex, propertyChange(second, 2));
      expect(secondIds).toHaveLength(AUTH_TYPES.length);
      await eventually(() => writeFailures() > 0, { what: 'a result write failing' });
    } finally {
      await db.knex.raw('drop trigger refuse_attempt on webhook_attempts; drop function refuse_attempt();');
    }
    // the write is retried, and goes through now
    const answers: string[] = [];
    for (const id of secondIds) {
      await eventually(async () => (await webhookRow(db.knex, id)).state === WebhookState.Successful, {
        what: `echoed webhook ${id} Successful`,
      });
      answers.push(...(await attemptsOf(db.knex, id)).map((attempt) => attempt.response_body ?? ''));
    }
    // what the refused write carried were the echoes of the requests, their credentials redacted
    // before they were ever held for writing
    expect(answers.join('\n')).toContain('"authorization":"Basic [redacted]"');
    expect(answers.join('\n')).toContain('"x-api-key":"[redacted]"');
    expect(answers.join('\n')).toContain('"authorization":"Bearer [redacted]"');
    for (const label of ['type 1 echo Basic header', 'type 4 echo API key']) {
      expect(secrets.get(label), label).toBeTruthy();
      expect(answers.join('\n'), label).not.toContain(secrets.get(label));
    }

    // --- the tokens the dispatcher signed, as the targets received them
    for (const target of targets) {
      for (const request of target.requests) {
        const header = /^Bearer (.+)$/.exec(String(request.headers.authorization ?? ''))?.[1];
        const inBody = (JSON.parse(request.body) as { platformSignedBearerToken?: string })
          .platformSignedBearerToken;
        for (const token of [header, inBody]) {
          if (!token) continue;
          secrets.set(`bearer token ${token.slice(-8)}`, token);
          secrets.set(`bearer token signature ${token.slice(-8)}`, token.split('.')[2]!);
        }
      }
    }
    expect([...secrets.keys()].filter((label) => label.startsWith('bearer token ')).length).toBeGreaterThan(
      0,
    );

    expect(await running.stop()).toBe(0);
    dispatcher = undefined;
    const output = running.output;
    const seconds = ((Date.now() - started) / 1000).toFixed(1);
    console.info(
      `dispatcher output: ${output.length} bytes, ${running.logs.length} log lines, ${secrets.size} secrets, ` +
        `${writeFailures()} failed result write(s) logged, ${seconds} s from start to stop`,
    );

    // every path above was logged, at every level down to debug (nothing logs at trace today)
    const messages = (msg: string, level?: number) =>
      running.logs.filter((line) => line.msg === msg && (level === undefined || line.level === level));
    expect(messages('attempt', 20).length, 'debug: successful attempts').toBeGreaterThan(0);
    expect(messages('attempt', 30).length, 'info: attempts to retry').toBeGreaterThan(0);
    expect(messages('attempt', 40).length, 'warn: attempts that failed for good').toBeGreaterThan(0);
    expect(messages('webhook bearer token signed', 20).length).toBeGreaterThan(0);
    // each unpreparable webhook twice (two attempts), with the error
    const unprepared = messages('could not prepare the delivery', 50);
    expect(unprepared).toHaveLength(2 * unpreparable.length);
    for (const line of unprepared) expect(line.err).toBeDefined();
    expect(writeFailures()).toBeGreaterThan(0);
    for (const line of messages('writing results failed')) {
      expect(JSON.stringify(line.err)).toContain('result write refused by the test');
    }

    expect(leaks(output)).toEqual([]);
  });
});

describe('the dispatcher’s logger redacts credential fields (defence in depth)', () => {
  it('at the top of a log line and inside request, err, webhook and body', () => {
    const lines: string[] = [];
    const logger = createLogger(
      { level: 'trace', dispatcherId: 'test' },
      { write: (line) => void lines.push(line) },
    );
    const headers = {
      authorization: 'Basic c2VjcmV0LWJhc2ljOnBhc3N3b3Jk',
      'x-api-key': 'secret-api-key',
      'content-type': 'application/json',
    };
    logger.info({ headers }, 'top-level headers');
    logger.info({ request: { url: 'https://hooks.example.com/x', headers } }, 'a request');
    logger.error(
      { err: Object.assign(new Error('boom'), { headers, credentials: { password: 'secret-password' } }) },
      'an error carrying a request',
    );
    logger.info(
      {
        webhook: {
          id: 1,
          auth_credentials: 'v1.sealed-credentials',
          signing_secret: 'v1.sealed-signing-secret',
        },
        credentials: { username: 'u', password: 'secret-password', apiKey: 'secret-api-key' },
        password: 'secret-password',
        apiKey: 'secret-api-key',
        token: 'secret-token',
        body: { platformSignedBearerToken: 'secret-token' },
      },
      'everything at once',
    );
    const output = lines.join('');
    for (const text of ['c2VjcmV0', 'secret-api-key', 'secret-password', 'v1.sealed', 'secret-token']) {
      expect(output, text).not.toContain(text);
    }
    // what is not a credential is still there
    expect(output).toContain('https://hooks.example.com/x');
    expect(output).toContain('application/json');
    expect(output).toContain('"msg":"an error carrying a request"');
    expect(output).toContain('boom');
    expect(lines).toHaveLength(4);
  });
});
