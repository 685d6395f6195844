/**
 * Hostile clients: a property-based fuzz run against every operation of the OpenAPI
 * document. Each operation gets at least FUZZ_CASES (default 200) requests, schema-valid ones sent
 * by a party the operation allows and hostile ones (see fuzz-requests.ts). Whatever comes in:
 *
 * - the API never answers 5xx;
 * - every 4xx but 401 is RFC 9457 `application/problem+json` with its status, a 401 has no body;
 * - a read (GET, search, batch read) writes nothing, whatever it answers;
 * - every refused request writes nothing, except what RECORDED_REFUSALS lets it write on purpose
 *   (failed logins count against their rate limit; a wrong recovery code is a strike on the
 *   account it names). A row trigger on every table records each insert, update and delete,
 *   with the columns it changed and the row; per operation, the row count of every table is
 *   compared with what the triggers recorded, so no table escapes them.
 *
 * A read's requests go out 25 at a time over raw HTTP (paths unnormalised, headers as generated):
 * any write during them is a failure, whichever request made it. A write's requests go out one
 * after another, with the write log read after each answer, so each write is attributed to the
 * one request that made it and every refusal is checked, also one beside a request that
 * succeeded. The test asserts, per operation, that the refusals checked are all of them.
 *
 * FUZZ_SEED reproduces a run (default fixed, so CI sends the same requests every time);
 * FUZZ_CASES raises the number of requests per operation.
 */
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { MAX_RECOVERY_FAILURES } from '../../src/features/password-recovery/password-recovery-service';
import { buildAccount, buildParty, type WorldParty, useTestApi } from '../support/api';
import type { Operation } from './fuzz-document';
import { boundaryCases, caseArbitrary, renderCase, type Caller, type FuzzCase } from './fuzz-requests';
import { ROUTES } from '../../src/routes';
import { rawClient, type RawRequest, type RawResponse } from './raw-http';
import {
  captureLogger,
  describeWrite,
  documentedOperations,
  openPortalSession,
  recordWrites,
  unexplainedCounts,
  type WriteRecord,
} from './security-test-support';

const CASES = Math.max(1, Number(process.env.FUZZ_CASES ?? 200));
const SEED = process.env.FUZZ_SEED === undefined ? 20_261_122 : Number(process.env.FUZZ_SEED);
/** A read's requests sent at once. */
const BATCH = 25;

/** A refused request, as its writes are judged. */
interface Refusal {
  status: number;
  /** Its body as JSON.parse reads it (as the API's parser does: the last duplicate key wins). */
  body: unknown;
  /** Everything it wrote, oldest first. */
  writes: readonly WriteRecord[];
}

/** A refusal of an operation that writes on purpose: why, and exactly what it may write. */
interface RecordedRefusal {
  why: string;
  allows(write: WriteRecord, refusal: Refusal): boolean;
}

/** Whether an update changed only `columns` (an insert or a delete is not such an update). */
const updatesOnly = (write: WriteRecord, columns: readonly string[]) =>
  write.op === 'UPDATE' && write.changed.every((column) => columns.includes(column));

/**
 * A hit counted against a rate limit: the window's row inserted, or its `hits` raised (or given
 * back, `refundRateLimit`). Never a delete, never another column.
 */
const rateLimitHit = (write: WriteRecord) =>
  write.table === 'rate_limit_hits' && (write.op === 'INSERT' || updatesOnly(write, ['hits']));

const emailOf = (body: unknown): string | undefined =>
  body !== null && typeof body === 'object' && typeof (body as { email?: unknown }).email === 'string'
    ? (body as { email: string }).email
    : undefined;

/**
 * A strike of a wrong recovery code (password-recovery-service.ts `changePasswordWithRecoveryCode`): an
 * update of the live account the request's email names (matched like `findLoginAccount`,
 * case-insensitively), of its strike counter and block timestamp only. Strikes 1 to 4 answer
 * 400 and leave it unblocked; the 5th answers 403 and blocks it.
 */
function isStrike(write: WriteRecord, refusal: Refusal): boolean {
  const email = emailOf(refusal.body);
  if (write.table !== 'accounts' || email === undefined) return false;
  if (!updatesOnly(write, ['recovery_failures', 'recovery_blocked_until'])) return false;
  const { row } = write;
  if (String(row.email).toLowerCase() !== email.toLowerCase() || row.deleted !== null) return false;
  const failures = Number(row.recovery_failures);
  return refusal.status === 403
    ? failures === MAX_RECOVERY_FAILURES && row.recovery_blocked_until !== null
    : refusal.status === 400 &&
        failures >= 1 &&
        failures < MAX_RECOVERY_FAILURES &&
        row.recovery_blocked_until === null;
}

/**
 * The refusals that write on purpose, by operation; every other refusal writes nothing. Read
 * from the services (grep `consumeRateLimit` and the recovery strike): these are all of them.
 */
const RECORDED_REFUSALS: Record<string, RecordedRefusal> = {
  'post /api/auth/login': {
    why: 'a failed login counts against the per-email and per-address limits',
    allows: rateLimitHit,
  },
  'post /api/auth/login/mfa': {
    why: 'a wrong second factor counts against MfaPerAccount (a bad mfaToken hit is given back)',
    allows: rateLimitHit,
  },
  'delete /api/accounts/myself/mfa': {
    why: 'a wrong password or code on disable counts against MfaPerAccount',
    allows: rateLimitHit,
  },
  'put /api/accounts/{id}/password': {
    why: 'a wrong current password counts against PasswordChange',
    allows: rateLimitHit,
  },
  'post /api/auth/recover-password': {
    why: 'every request counts against the recovery limits, a 429 included',
    allows: rateLimitHit,
  },
  'put /api/auth/change-password-with-recovery-code': {
    why:
      'every try counts against the address limit, a wrong code for an unknown email against its ' +
      'strikes; a wrong code for an account is a strike on that account (400), the 5th blocks it ' +
      '(403) and voids its unused codes',
    allows: (write, refusal) =>
      rateLimitHit(write) ||
      isStrike(write, refusal) ||
      // the codes voided by a block: unused ones of the account this request has just blocked
      (refusal.status === 403 &&
        write.table === 'recovery_codes' &&
        updatesOnly(write, ['expires_at']) &&
        write.row.used_at === null &&
        refusal.writes.some(
          (strike) =>
            isStrike(strike, refusal) &&
            strike.row.recovery_blocked_until !== null &&
            strike.row.id === write.row.account_id,
        )),
  },
};

const { document, operations } = documentedOperations();

const isRead = (operation: Operation) =>
  operation.method === 'get' || (operation.method === 'post' && /\/(search|batch)$/.test(operation.path));

interface Tally {
  cases: number;
  valid: number;
  byStatus: Record<string, number>;
  /** 4xx answers whose writes were checked: all of them, asserted per operation. */
  refusalsChecked: number;
  refusals: number;
  /** Refusals that wrote what RECORDED_REFUSALS allows (a rate-limit hit, a strike). */
  recorded: number;
  /** What those refusals wrote, by `table op`: shows which allowances the run exercised. */
  recordedWrites: Record<string, number>;
  ms: number;
  /** The slowest answer, in milliseconds. */
  slowest: number;
}

let client: ReturnType<typeof rawClient>;
let writes: Awaited<ReturnType<typeof recordWrites>>;
const logs = captureLogger();
const { api, world } = useTestApi({ world: true, logger: logs.logger });
const tallies = new Map<string, Tally>();
const started = performance.now();

/** The token of a portal session of the PMC granted every action (the `portal` caller). */
let portalToken: string;

beforeAll(async () => {
  portalToken = (await openPortalSession(api, world.pmc)).token;
  writes = await recordWrites(api);
  client = rawClient(api.url, { maxSockets: BATCH });
});

afterAll(async () => {
  client?.close();
  const rows = [...tallies.entries()];
  const sum = (pick: (t: Tally) => number) => rows.reduce((total, [, t]) => total + pick(t), 0);
  const countsText = (byStatus: Record<string, number>) =>
    Object.entries(byStatus)
      .sort(([a], [b]) => a.localeCompare(b))
      .map(([status, n]) => `${status}×${n}`)
      .join(' ');
  const lines = rows.map(
    ([name, t]) =>
      `${name.padEnd(58)} ${String(t.cases).padStart(4)} cases (${t.valid} schema-valid) ${countsText(t.byStatus)}; no-write checked ${t.refusalsChecked}/${t.refusals} refusals (${t.recorded} wrote what they may${t.recorded ? `: ${countsText(t.recordedWrites)}` : ''}); ${Math.round(t.ms)} ms, slowest answer ${Math.round(t.slowest)} ms`,
  );
  const allStatuses: Record<string, number> = {};
  for (const [, t] of rows)
    for (const [status, n] of Object.entries(t.byStatus))
      allStatuses[status] = (allStatuses[status] ?? 0) + n;
  const seconds = ((performance.now() - started) / 1000).toFixed(1);
  console.log(
    `fuzz: ${rows.length} operations, ${sum((t) => t.cases)} requests (${sum((t) => t.valid)} schema-valid) in ${seconds} s (seed ${SEED}, ≥${CASES} per operation)\n` +
      `answers ${countsText(allStatuses)}; no-write checked ${sum((t) => t.refusalsChecked)}/${sum((t) => t.refusals)} refusals (${sum((t) => t.recorded)} wrote what they may)\n` +
      lines.join('\n'),
  );
});

function partyOf(caller: Extract<Caller, { kind: 'party' }>): WorldParty {
  const byType: Record<number, WorldParty> = {
    1: world.admin,
    2: caller.other ? world.otherPmc : world.pmc,
    3: world.poolManager,
    5: world.contractor,
    7: caller.other ? world.otherUser : world.user,
    13: world.broker,
    14: world.insurer,
  };
  const party = byType[caller.partyType];
  if (!party) throw new Error(`no world party of type ${caller.partyType}`);
  return party;
}

function authorization(caller: Caller): string | undefined {
  if (caller.kind === 'none') return undefined;
  if (caller.kind === 'garbage') return caller.header;
  if (caller.kind === 'portal') return `Bearer ${portalToken}`;
  return `Bearer ${partyOf(caller)[caller.holder].token}`;
}

/** What is wrong with an answer, or undefined. */
function problemWith(response: RawResponse): string | undefined {
  if (response.status >= 500) return `answered ${response.status}`;
  if (response.status === 401) {
    if (response.text !== '') return '401 with a body';
    if (!String(response.headers['www-authenticate'] ?? '').startsWith('Bearer '))
      return '401 without WWW-Authenticate';
    return undefined;
  }
  if (response.status >= 400) {
    if (response.headers['content-type'] !== 'application/problem+json') {
      return `${response.status} as ${String(response.headers['content-type'])}, not application/problem+json`;
    }
    try {
      const problem = JSON.parse(response.text) as { status?: unknown; type?: unknown; title?: unknown };
      if (
        problem.status !== response.status ||
        typeof problem.type !== 'string' ||
        typeof problem.title !== 'string'
      ) {
        return `${response.status} with a malformed ProblemDetails`;
      }
    } catch {
      return `${response.status} whose body is not JSON`;
    }
  }
  return undefined;
}

const excerpt = (text: string, max = 600) =>
  text.length > max ? `${text.slice(0, max)}… (${text.length} chars)` : text;

function describeRequest(request: RawRequest, fuzzCase: FuzzCase): string {
  const headers = { ...request.headers };
  if (typeof headers.authorization === 'string' && fuzzCase.caller.kind === 'party') {
    headers.authorization = `Bearer <${fuzzCase.caller.holder} token of party type ${fuzzCase.caller.partyType}>`;
  }
  if (fuzzCase.caller.kind === 'portal') headers.authorization = 'Bearer <portal token of the PMC>';
  const body = request.body ? excerpt(request.body.toString('utf8'), 400) : '(none)';
  return `${request.method} ${excerpt(request.path, 300)}\n  headers ${excerpt(JSON.stringify(headers), 400)}\n  body ${body}`;
}

/** The JSON body of a request, as the API's parser reads it; undefined if it is none. */
function parsedBody(request: RawRequest): unknown {
  try {
    return request.body ? (JSON.parse(request.body.toString('utf8')) as unknown) : undefined;
  } catch {
    return undefined;
  }
}

/** Sends one request; a request that got no answer is answered status 0 with the error. */
const sendOne = (request: RawRequest): Promise<RawResponse> =>
  client.send(request).catch((error: Error) => ({ status: 0, headers: {}, text: error.message, ms: 0 }));

/**
 * Sends `cases` and checks every answer and what each refusal wrote: a read's all at once (any
 * write during them is a failure), a write's one after another, reading the write log after each
 * answer so every write belongs to one request. Collects every write in `opWrites`, for the
 * row-count check. Answers the failures found.
 */
async function sendCases(
  operation: Operation,
  cases: FuzzCase[],
  tally: Tally,
  opWrites: WriteRecord[],
): Promise<string[]> {
  if (cases.length === 0) return [];
  const recorded = RECORDED_REFUSALS[`${operation.method} ${operation.path}`];
  const failures: string[] = [];
  const logsBefore = logs.lines.length;
  const requests = cases.map((fuzzCase) => renderCase(operation, fuzzCase, authorization));
  const requestText = (index: number) => describeRequest(requests[index]!, cases[index]!);
  const isRefusal = (response: RawResponse) => response.status >= 400 && response.status < 500;
  let responses: RawResponse[];
  if (isRead(operation)) {
    responses = await Promise.all(requests.map(sendOne));
    await api.deps.operations.idle();
    const written = await writes.take();
    opWrites.push(...written);
    tally.refusalsChecked += responses.filter(isRefusal).length;
    if (written.length) {
      failures.push(
        `a read wrote ${written.map(describeWrite).join(', ')}; the requests were:\n` +
          requests.map((_, i) => requestText(i)).join('\n'),
      );
    }
  } else {
    responses = [];
    for (const [index, request] of requests.entries()) {
      const response = await sendOne(request);
      responses.push(response);
      // the API commits before it answers, and nothing else writes meanwhile but the operation a
      // request started (a bulk action, a recover, a replay), which runs to its end first: these
      // are the request's writes
      await api.deps.operations.idle();
      const written = await writes.take();
      opWrites.push(...written);
      if (!isRefusal(response)) continue;
      tally.refusalsChecked++;
      if (written.length === 0) continue;
      const refusal: Refusal = { status: response.status, body: parsedBody(request), writes: written };
      const unexpected = written.filter((write) => !recorded?.allows(write, refusal));
      if (unexpected.length === 0) {
        tally.recorded++;
        for (const { table, op } of written) {
          tally.recordedWrites[`${table} ${op}`] = (tally.recordedWrites[`${table} ${op}`] ?? 0) + 1;
        }
      } else {
        failures.push(
          `a ${response.status} wrote ${unexpected.map(describeWrite).join(', ')}` +
            `\n  rows ${excerpt(JSON.stringify(unexpected.map((write) => write.row)), 1200)}` +
            `\n  ${requestText(index)}\n  answer ${excerpt(response.text)}`,
        );
      }
    }
  }
  const logged = logs.lines.slice(logsBefore).filter((line) => line.includes('"level":50'));
  responses.forEach((response, index) => {
    const status = response.status === 0 ? 'no answer' : String(response.status);
    tally.byStatus[status] = (tally.byStatus[status] ?? 0) + 1;
    tally.slowest = Math.max(tally.slowest, response.ms);
    if (isRefusal(response)) tally.refusals++;
    const problem = response.status === 0 ? response.text : problemWith(response);
    if (problem) {
      failures.push(
        `${problem}\n  ${requestText(index)}\n  answer ${excerpt(response.text)}` +
          (logged.length ? `\n  logged ${excerpt(logged.join('\n'), 2000)}` : ''),
      );
    }
  });
  return failures;
}

describe('fuzzing every operation of the OpenAPI document', () => {
  it('covers every route of the API, and the document it serves is the one fuzzed', async () => {
    expect(operations).toHaveLength(ROUTES.length);
    const served = await client.send({ method: 'GET', path: '/api/openapi.json', headers: {} });
    expect(JSON.parse(served.text)).toEqual(JSON.parse(JSON.stringify(document)));
  });

  it.each(
    operations.map(
      (operation) => [`${operation.method.toUpperCase()} ${operation.path}`, operation] as const,
    ),
  )(
    '%s: no 5xx, ProblemDetails for every refusal, no write on a 4xx',
    async (name, operation) => {
      const tally: Tally = {
        cases: 0,
        valid: 0,
        byStatus: {},
        refusalsChecked: 0,
        refusals: 0,
        recorded: 0,
        recordedWrites: {},
        ms: 0,
        slowest: 0,
      };
      // the write log is checked per request (a read's per batch); the row counts of every table
      // once per operation, against the rows the log says were inserted and deleted, so no table
      // escapes the log. Records left unread here (by a request that got no answer in time and
      // wrote later, already a failure) belong to no request of this operation
      await writes.take();
      const countsBefore = await writes.counts();
      const opWrites: WriteRecord[] = [];
      tallies.set(name, tally);
      const begun = performance.now();
      // ids of rows that exist (the world's parties, accounts, groups and what earlier runs
      // created) make valid requests reach the services; the rest find nothing. So do the emails
      // of live accounts (as stored, or in upper case: the API matches them case-insensitively)
      const emails = await api.deps
        .knex('accounts')
        .whereNull('deleted')
        .orderBy('id')
        .pluck<string[]>('email');
      const context = {
        document,
        ids: fc.integer({ min: 1, max: 40 }),
        emails: emails.length
          ? fc.constantFrom(...emails).chain((email) => fc.constantFrom(email, email.toUpperCase()))
          : undefined,
      };
      const batch = fc.array(caseArbitrary(operation, context), { minLength: BATCH, maxLength: BATCH });
      const property = fc.asyncProperty(batch, async (cases) => {
        tally.cases += cases.length;
        tally.valid += cases.filter((c) => c.kind === 'valid').length;
        const failures = await sendCases(operation, cases, tally, opWrites);
        if (failures.length) throw new Error(failures.slice(0, 5).join('\n\n'));
      });
      const details = await fc.check(property, {
        numRuns: Math.ceil(CASES / BATCH),
        seed: SEED + operations.indexOf(operation),
        endOnFailure: true,
      });
      // the largest bodies, once each
      const boundaryFailures = await sendCases(operation, boundaryCases(operation), tally, opWrites);
      if (boundaryFailures.length) throw new Error(`${name}: ${boundaryFailures.join('\n\n')}`);
      const unexplained = unexplainedCounts(countsBefore, await writes.counts(), opWrites);
      expect(unexplained, 'row counts that changed without the write log seeing it').toEqual([]);
      tally.ms = performance.now() - begun;
      if (details.failed) {
        const cause =
          details.errorInstance instanceof Error
            ? details.errorInstance.message
            : String(details.errorInstance);
        throw new Error(
          `${name}: ${cause}\n(replay: FUZZ_SEED=${SEED}, seed ${details.seed}, path ${details.counterexamplePath})`,
        );
      }
      expect(tally.cases).toBeGreaterThanOrEqual(CASES);
      expect(tally.refusalsChecked, 'refusals whose writes were checked').toBe(tally.refusals);
    },
    120_000,
  );
});

describe('what the fuzz run found, and the limits it keeps to', () => {
  it('a JSON body that fails to decompress closes its connection, so the next request on it is not reset', async () => {
    // one socket, reused: before the fix the server answered 400 and then reset the connection
    // under the client's next request
    const single = rawClient(api.url, { maxSockets: 1 });
    try {
      const token = `Bearer ${world.pmc.full.token}`;
      for (const encoding of ['deflate', 'br', 'gzip']) {
        const broken = await single.send({
          method: 'POST',
          path: '/api/properties/batch',
          headers: { authorization: token, 'content-type': 'application/json', 'content-encoding': encoding },
          body: Buffer.from(JSON.stringify({ ids: [1], pad: 'x'.repeat(200_000) })),
        });
        expect(broken.status).toBe(400);
        expect(broken.headers['content-type']).toBe('application/problem+json');
        expect(broken.headers.connection).toBe('close');
        const next = await single.send({
          method: 'POST',
          path: '/api/properties/batch',
          headers: { authorization: token, 'content-type': 'application/json' },
          body: Buffer.from('{"ids":[1]}'),
        });
        expect(next.status).toBe(200);
      }
    } finally {
      single.close();
    }
  });

  it('a request head past 16 KiB is answered before the API runs, with a 431 ProblemDetails', async () => {
    const authorization = `Bearer ${world.pmc.full.token}`;
    // past the limit in the query, then in a header
    for (const [query, padding] of [
      ['x'.repeat(17 * 1024), {}],
      ['x', { 'x-padding': 'x'.repeat(17 * 1024) }],
    ] as const) {
      const response = await client.send({
        method: 'GET',
        path: `/api/properties?q=${query}`,
        headers: { authorization, ...padding },
      });
      expect(response.status).toBe(431);
      expect(response.headers['content-type']).toBe('application/problem+json');
      expect(JSON.parse(response.text)).toMatchObject({
        type: 'https://httpstatuses.io/431',
        status: 431,
        detail: 'The request line and headers together exceed 16 KiB',
      });
    }
  });
});

describe('the refusals that write on purpose', () => {
  // last in the file: it moves the test clock past the rate-limit windows the fuzz run filled,
  // which also expires the world's tokens
  it('a wrong recovery code writes only the strike of the account it names; the 5th blocks it and voids its code', async () => {
    const rule = RECORDED_REFUSALS['put /api/auth/change-password-with-recovery-code']!;
    api.clock.advance(60 * 60_000);
    // an account of its own: the fuzz run may have renamed or deleted the world's
    const party = await buildParty(api.deps, { type: 14 });
    const account = await buildAccount(api.deps, { partyId: party.id, permissions: [] });
    const bystander = await buildAccount(api.deps, { partyId: party.id, permissions: [] });
    const json = (value: unknown) => ({
      headers: { 'content-type': 'application/json' },
      body: Buffer.from(JSON.stringify(value)),
    });
    const issued = await client.send({
      method: 'POST',
      path: '/api/auth/recover-password',
      ...json({ email: account.email }),
    });
    expect(issued.status, issued.text).toBe(200);
    await writes.take();

    // the email in another case: the API matches it case-insensitively, and so must the rule
    const body = {
      email: account.email.toUpperCase(),
      password: 'Fresh-Password-1!',
      recoveryCode: 'AAAA-2222',
    };
    const refusals: Refusal[] = [];
    for (let attempt = 1; attempt <= 5; attempt++) {
      const response = await client.send({
        method: 'PUT',
        path: '/api/auth/change-password-with-recovery-code',
        ...json(body),
      });
      refusals.push({ status: response.status, body, writes: await writes.take() });
    }
    expect(refusals.map((refusal) => refusal.status)).toEqual([400, 400, 400, 400, 403]);
    for (const refusal of refusals) {
      expect(refusal.writes.filter((write) => !rule.allows(write, refusal)).map(describeWrite)).toEqual([]);
    }
    // what was allowed is what happened: a hit, a strike, and at the block the voided code
    const kinds = (refusal: Refusal) => refusal.writes.map(describeWrite).sort();
    expect(kinds(refusals[0]!)).toEqual(['accounts UPDATE (recovery_failures)', 'rate_limit_hits INSERT']);
    expect(kinds(refusals[4]!)).toEqual([
      'accounts UPDATE (recovery_blocked_until, recovery_failures)',
      'rate_limit_hits UPDATE (hits)',
      'recovery_codes UPDATE (expires_at)',
    ]);

    // and the rule refuses the same writes a step away from what a strike is
    const strike = refusals[0]!.writes.find((write) => write.table === 'accounts')!;
    const block = refusals[4]!;
    const voided = block.writes.find((write) => write.table === 'recovery_codes')!;
    const refused = (write: WriteRecord, refusal: Refusal) => !rule.allows(write, refusal);
    expect(refused({ ...strike, changed: [...strike.changed, 'password_hash'] }, refusals[0]!)).toBe(true);
    expect(refused(strike, { ...refusals[0]!, body: { ...body, email: bystander.email } })).toBe(true);
    expect(
      refused({ ...strike, row: { ...strike.row, id: bystander.id, email: bystander.email } }, refusals[0]!),
    ).toBe(true);
    expect(refused(strike, { ...refusals[0]!, status: 403 })).toBe(true);
    expect(refused({ ...strike, op: 'DELETE', changed: [] }, refusals[0]!)).toBe(true);
    expect(refused(voided, { ...block, status: 400 })).toBe(true);
    expect(refused({ ...voided, row: { ...voided.row, account_id: bystander.id } }, block)).toBe(true);
    expect(refused({ ...voided, changed: ['used_at'] }, block)).toBe(true);
  });
});
