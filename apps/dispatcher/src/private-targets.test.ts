/**
 * Hostile targets, through the real dispatcher process: with private targets not
 * allowed (production's default), a registration pointing at the machine itself or at the cloud
 * metadata service never gets a request out of the dispatcher. Every attempt is recorded as
 * `private-address` and retried on the schedule like any failure, and the live local targets behind
 * those URLs (reachable from this process, as checked first) receive nothing, not even a connection.
 *
 * Literal addresses (in any spelling the URL parser accepts) and `localhost` are refused before
 * connecting (`Deliverer.deliver`); the machine's own host name goes through the system resolver
 * and is refused at connect time by the safe lookup, on the addresses it resolved to. Redirects
 * need no case here: every target a redirect could come from is itself private, so refused, and
 * redirects are never followed at all (`hostile-targets.test.ts` › a redirect to a private address
 * …, `secrets-in-logs.test.ts` through the process, with private targets allowed).
 */
import { generateKeyPairSync } from 'node:crypto';
import { lookup } from 'node:dns/promises';
import { hostname } from 'node:os';
import {
  attemptsOf,
  createTestDatabase,
  type DispatcherProcess,
  propertyChange,
  seedChange,
  seedParty,
  seedRegistration,
  startDispatcher,
  startTestTarget,
  type TestDatabase,
  type TestTarget,
  waitForWebhook,
  webhookRow,
} from '@platform/testkit';
import { isPrivateHost, WebhookState } from '@platform/shared';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

/** The wait before the second (and last) attempt. */
const RETRY_MS = 2_000;
/** Timers, rounding and a loaded 2-core machine. */
const SLACK_MS = 1_500;

describe('the real dispatcher with private targets disallowed (production’s default)', () => {
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

  /**
   * A live target behind the machine's own host name, on the address the name resolves to; none
   * (with the reason) where the name resolves to a public address, or to none this machine has.
   */
  async function hostNameTarget(): Promise<{ url: string; target: TestTarget } | string> {
    const name = hostname();
    const addresses = await lookup(name, { all: true }).catch(() => []);
    if (addresses.length === 0) return `${name} does not resolve`;
    if (!addresses.every(({ address }) => isPrivateHost(address))) {
      return `${name} resolves to a public address (${addresses.map((a) => a.address).join(', ')})`;
    }
    try {
      const target = await startTestTarget(undefined, { host: addresses[0]!.address });
      return { url: `http://${name}:${new URL(target.origin).port}/hook`, target };
    } catch (error) {
      return `cannot listen on ${addresses[0]!.address}: ${(error as Error).message}`;
    }
  }

  it('records every attempt at the machine itself or the metadata service as private-address, retries on the schedule, and sends nothing', async () => {
    const local = await startTestTarget();
    targets.push(local);
    const port = new URL(local.origin).port;
    /** The URLs that lead to a live target when followed, by what they test. */
    const cases = new Map<string, { url: string; target?: TestTarget }>([
      ['127.0.0.1', { url: `${local.origin}/hook`, target: local }],
      ['localhost', { url: `http://localhost:${port}/hook`, target: local }],
      ['IPv4-mapped IPv6 of 127.0.0.1', { url: `http://[::ffff:127.0.0.1]:${port}/hook`, target: local }],
      ['127.0.0.1 as one decimal number', { url: `http://2130706433:${port}/hook`, target: local }],
      ['0.0.0.0 (the local host on Linux)', { url: `http://0.0.0.0:${port}/hook`, target: local }],
      // nothing listens there on this machine; without the check the attempt would time out
      ['the metadata service', { url: 'http://169.254.169.254/latest/meta-data/' }],
    ]);
    const byName = await hostNameTarget();
    if (typeof byName === 'string') {
      console.info(`the host-name case is left out: ${byName}`);
    } else {
      targets.push(byName.target);
      cases.set(`the host name ${hostname()}, through the system resolver`, byName);
    }

    // each of these URLs reaches its live target from an ordinary client, so a target that
    // receives nothing below was refused, not unreachable (127.0.0.1 must; a spelling this machine
    // cannot connect to, say without IPv6 sockets, keeps only the error-kind check)
    for (const [what, { url, target }] of cases) {
      if (!target) continue;
      const before = target.requests.length;
      const status = await fetch(url, { method: 'POST', body: '{}' }).then(
        (answer) => answer.status,
        (error: Error) => `${error.message} (${String((error.cause as Error | undefined)?.message)})`,
      );
      if (status !== 200 && what !== '127.0.0.1') {
        console.info(
          `${what}: not reachable from this process either (${status}); its error kind is still checked`,
        );
        continue;
      }
      expect(status, what).toBe(200);
      expect(target.requests.length, what).toBe(before + 1);
    }
    const seen = new Map(
      targets.map((target) => [
        target,
        { requests: target.requests.length, connections: target.connections },
      ]),
    );

    const party = { id: await seedParty(db.knex, 'Private') };
    const registrations = new Map<number, string>();
    for (const [what, { url }] of cases) {
      registrations.set((await seedRegistration(db.knex, { partyId: party!.id, targetUrl: url })).id, what);
    }

    // the production key rules apply: a JWT key must be given
    const jwtKey = generateKeyPairSync('rsa', { modulusLength: 2048 }).privateKey.export({
      type: 'pkcs8',
      format: 'pem',
    }) as string;
    dispatcher = await startDispatcher(db.url, {
      NODE_ENV: 'production',
      // unset: the dispatcher's own default decides, which in production is to refuse
      ALLOW_PRIVATE_TARGETS: undefined,
      JWT_PRIVATE_KEY: jwtKey,
      WEBHOOK_TIMEOUT: '2s',
      WEBHOOK_RETRY_SCHEDULE: `0ms,${RETRY_MS}ms`,
      LOG_LEVEL: 'info',
    });
    const running = dispatcher;
    const ids = await seedChange(db.knex, propertyChange(party!.id, 1));
    expect(ids).toHaveLength(cases.size);
    /** Webhook id → the case it tests. */
    const whatOf = new Map<number, string>();
    for (const id of ids) whatOf.set(id, registrations.get((await webhookRow(db.knex, id)).registration_id)!);

    // the first attempt: refused at once, Retrying, due again after the scheduled wait
    for (const id of ids) {
      const what = whatOf.get(id)!;
      const row = await waitForWebhook(db.knex, id, WebhookState.Retrying, { attempts: 1 });
      const [first] = await attemptsOf(db.knex, id);
      expect(first, what).toMatchObject({
        number: 1,
        error_kind: 'private-address',
        status_code: null,
        response_body: null,
      });
      expect(first!.duration_ms, what).toBeLessThan(SLACK_MS);
      const wait = row.next_attempt_at.getTime() - first!.started_at.getTime();
      expect(wait, what).toBeGreaterThanOrEqual(RETRY_MS - 50);
      expect(wait, what).toBeLessThan(RETRY_MS + SLACK_MS);
    }
    // the second and last: refused again, Failed
    for (const id of ids) {
      const what = whatOf.get(id)!;
      const row = await waitForWebhook(db.knex, id, WebhookState.Failed, { attempts: 2, timeoutMs: 10_000 });
      const [first, second] = await attemptsOf(db.knex, id);
      expect(second, what).toMatchObject({
        number: 2,
        error_kind: 'private-address',
        status_code: null,
        response_body: null,
      });
      expect(second!.started_at.getTime() - first!.started_at.getTime(), what).toBeGreaterThanOrEqual(
        RETRY_MS - 50,
      );
      expect(row.completed_at, what).not.toBeNull();
    }

    // nothing reached the live targets, not even a connection
    for (const target of targets) {
      expect(target.requests.length, target.origin).toBe(seen.get(target)!.requests);
      expect(target.connections, target.origin).toBe(seen.get(target)!.connections);
    }
    // and the log says so: Retrying at info, Failed at warn
    const attempts = running.logs.filter((line) => line.msg === 'attempt');
    expect(attempts.filter((line) => line.level === 30 && line.errorKind === 'private-address')).toHaveLength(
      cases.size,
    );
    expect(attempts.filter((line) => line.level === 40 && line.errorKind === 'private-address')).toHaveLength(
      cases.size,
    );
    expect(await running.stop()).toBe(0);
    dispatcher = undefined;
  });
});
