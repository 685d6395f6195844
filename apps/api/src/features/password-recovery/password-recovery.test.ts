/**
 * Password recovery end to end: recover-password writes a mail to the outbox, the code is read
 * out of it and used through change-password-with-recovery-code, over HTTP and real Postgres.
 */
import { PartyType } from '@platform/shared';
import { decodeJwt } from 'jose';
import { beforeEach, describe, expect, it } from 'vitest';
import {
  buildAccount,
  buildParty,
  expectAccessRules,
  login,
  TEST_PASSWORD,
  useTestApi,
} from '../../../tests/support/api';
import { expectProblem, writableCounts } from '../../../tests/support/http';
import { MAX_RECOVERY_FAILURES } from './password-recovery-service';

const SECOND = 1000;
const MINUTE = 60 * SECOND;
const HOUR = 60 * MINUTE;
const NEW_PASSWORD = 'New-Password-2?';
const CODE_IN_MAIL = /Your recovery code: ([A-Z2-9]{4}-[A-Z2-9]{4})/;
const RECOVERY_MESSAGE =
  'If an account with this email exists and its recovery is not blocked, a recovery code has been sent to it.';

const { api, world } = useTestApi({ world: true });
beforeEach(async () => {
  api.clock.set(new Date());
  await api.deps.knex('rate_limit_hits').del();
});

const recover = (body: unknown) => api.fetch('/api/auth/recover-password', { method: 'POST', json: body });
const change = (body: unknown) =>
  api.fetch('/api/auth/change-password-with-recovery-code', { method: 'PUT', json: body });
const unblock = (path: string, token: string, body: unknown) =>
  api.fetch(path, { method: 'POST', token, json: body });
const activate = (id: number | string, token: string) =>
  api.fetch(`/api/accounts/${id}/activation-message`, { method: 'POST', token });

/** A fresh account of a party managed by the world's PMC (so in the PMC's scope). */
async function newAccount(options: { mustChangePassword?: boolean; managedBy?: number } = {}) {
  const party = await buildParty(api.deps, {
    type: PartyType.Contractor,
    managedByPartyId: options.managedBy ?? world.pmc.id,
  });
  return buildAccount(api.deps, { partyId: party.id, mustChangePassword: options.mustChangePassword });
}

interface OutboxMail {
  id: number;
  to_address: string;
  subject: string;
  text_body: string;
  kind: string;
}

function mailsTo(email: string): Promise<OutboxMail[]> {
  return api.deps.knex('mail_outbox').whereRaw('lower(to_address) = lower(?)', [email]).orderBy('id');
}

/** The code of the newest mail to `email`, as the mail shows it. */
async function latestCode(email: string): Promise<string> {
  const mails = await mailsTo(email);
  const text = mails.at(-1)?.text_body ?? '';
  const match = CODE_IN_MAIL.exec(text);
  if (!match) throw new Error(`no recovery code mailed to ${email}: ${text}`);
  return match[1]!;
}

/** Asks for a code through the API and reads it out of the outbox. */
async function mailedCode(email: string): Promise<string> {
  const response = await recover({ email });
  expect(response.status).toBe(200);
  return latestCode(email);
}

async function recoveryState(accountId: number) {
  return api.deps.knex('accounts').where({ id: accountId }).first<{
    recovery_failures: number;
    recovery_blocked_until: Date | null;
    password_hash: string | null;
    must_change_password: boolean;
  }>('recovery_failures', 'recovery_blocked_until', 'password_hash', 'must_change_password');
}

/** Row counts `writableCounts` knows, plus the recovery tables and the accounts' recovery state. */
async function counts() {
  const [codes] = await api.deps.knex('recovery_codes').count<{ count: string }[]>({ count: '*' });
  const [used] = await api.deps
    .knex('recovery_codes')
    .whereNotNull('used_at')
    .count<{ count: string }[]>({ count: '*' });
  const accounts = await api.deps
    .knex('accounts')
    .orderBy('id')
    .select('id', 'password_hash', 'recovery_failures', 'recovery_blocked_until');
  return { ...(await writableCounts(api)), codes: Number(codes?.count), used: Number(used?.count), accounts };
}

/** A wrong code that cannot be right: the alphabet has no 0, O, 1 or I. */
const WRONG_CODE = 'OOOO-IIII';

/** Blocks `email`'s recovery through the API: MAX wrong codes. */
async function strikeOut(email: string) {
  for (let strike = 1; strike < MAX_RECOVERY_FAILURES; strike++) {
    await expectProblem(await change({ email, password: NEW_PASSWORD, recoveryCode: WRONG_CODE }), 400);
  }
  return expectProblem(await change({ email, password: NEW_PASSWORD, recoveryCode: WRONG_CODE }), 403);
}

/** Starts the test clock just inside a fresh fixed window, so Retry-After is predictable. */
function startOfWindow(windowMs: number) {
  api.clock.set(new Date(Math.ceil(Date.now() / windowMs) * windowMs + SECOND));
}

describe('POST /api/auth/recover-password', () => {
  it('mails a one-time code to the account and answers 200 { message }', async () => {
    const account = await newAccount();
    const response = await recover({ email: account.email });
    expect(response.status).toBe(200);
    expect(await response.json()).toEqual({ message: RECOVERY_MESSAGE });

    const mails = await mailsTo(account.email);
    expect(mails).toHaveLength(1);
    expect(mails[0]).toMatchObject({
      to_address: account.email,
      kind: 'password-recovery',
      subject: 'Your password recovery code',
    });
    expect(mails[0]!.text_body).toMatch(CODE_IN_MAIL);
    expect(mails[0]!.text_body).toMatch(/valid for 30 minutes/);

    const [row] = await api.deps.knex('recovery_codes').where({ account_id: account.id });
    expect(row.used_at).toBeNull();
    expect(row.expires_at.getTime()).toBe(api.clock.now().getTime() + 30 * MINUTE);
  });

  it('stores the code hashed: the plain code appears nowhere in recovery_codes', async () => {
    const account = await newAccount();
    const code = await mailedCode(account.email);
    const rows = await api.deps.knex('recovery_codes').where({ account_id: account.id });
    expect(rows).toHaveLength(1);
    const stored = JSON.stringify(rows).toUpperCase();
    expect(stored).not.toContain(code);
    expect(stored).not.toContain(code.replace('-', ''));
    expect(rows[0].code_hash).toMatch(/^\$argon2id\$/);
  });

  it('gives every request a new code and the same answer', async () => {
    const account = await newAccount();
    const first = await mailedCode(account.email);
    const second = await mailedCode(account.email);
    expect(second).not.toBe(first);
    expect(await mailsTo(account.email)).toHaveLength(2);
  });

  it('answers an unknown email the same, and mails nothing', async () => {
    const account = await newAccount();
    const known = await recover({ email: account.email });
    const before = await counts();
    const unknown = await recover({ email: 'nobody-here@example.com' });
    expect(unknown.status).toBe(known.status);
    expect(await unknown.json()).toEqual(await known.json());
    const after = await counts();
    // only its rate-limit hits are new
    expect({ ...after, rate_limit_hits: 0, rate_limit_hit_total: 0 }).toEqual({
      ...before,
      rate_limit_hits: 0,
      rate_limit_hit_total: 0,
    });
    expect(await mailsTo('nobody-here@example.com')).toEqual([]);
  });

  it('treats a deleted account, and an account of a deleted party, as unknown', async () => {
    const deleted = await newAccount();
    await api.deps.knex('accounts').where({ id: deleted.id }).update({ deleted: api.clock.now() });
    const ofDeletedParty = await newAccount();
    await api.deps.knex('parties').where({ id: ofDeletedParty.partyId }).update({ deleted: api.clock.now() });
    for (const { email } of [deleted, ofDeletedParty]) {
      const response = await recover({ email });
      expect(response.status).toBe(200);
      expect(await response.json()).toEqual({ message: RECOVERY_MESSAGE });
      expect(await mailsTo(email)).toEqual([]);
    }
  });

  it('matches the email case-insensitively and ignores surrounding blanks', async () => {
    const account = await newAccount();
    expect((await recover({ email: `  ${account.email.toUpperCase()} ` })).status).toBe(200);
    const mails = await mailsTo(account.email);
    expect(mails).toHaveLength(1);
    expect(mails[0]!.to_address).toBe(account.email);
  });

  it('gives a blocked account no code, with the same answer', async () => {
    const account = await newAccount();
    await strikeOut(account.email);
    const response = await recover({ email: account.email });
    expect(response.status).toBe(200);
    expect(await response.json()).toEqual({ message: RECOVERY_MESSAGE });
    expect(await mailsTo(account.email)).toEqual([]);
  });

  it('limits one email to 5 requests per 15 minutes (DefaultRateLimitAuth): 429 with Retry-After', async () => {
    const account = await newAccount();
    startOfWindow(15 * MINUTE);
    for (let request = 1; request <= 5; request++) {
      expect((await recover({ email: account.email })).status, `request ${request}`).toBe(200);
    }
    api.clock.advance(MINUTE);
    const before = await mailsTo(account.email);
    const refused = await recover({ email: account.email.toUpperCase() });
    await expectProblem(refused, 429, { detail: /DefaultRateLimitAuth/ });
    expect(Number(refused.headers.get('retry-after'))).toBe(15 * 60 - 61);
    expect(await mailsTo(account.email)).toEqual(before);

    // an unknown email is limited the same way, so the limit cannot tell them apart
    for (let request = 1; request <= 5; request++) {
      expect((await recover({ email: 'ghost@example.com' })).status).toBe(200);
    }
    await expectProblem(await recover({ email: 'ghost@example.com' }), 429);

    // another email is not limited; the next window lets this one in again
    expect((await recover({ email: world.contractor.full.email })).status).toBe(200);
    api.clock.advance(15 * MINUTE);
    expect((await recover({ email: account.email })).status).toBe(200);
  });

  it('limits one client address to 20 requests per 15 minutes across emails', async () => {
    startOfWindow(15 * MINUTE);
    for (let request = 1; request <= 20; request++) {
      expect((await recover({ email: `guess-${request}@example.com` })).status, `request ${request}`).toBe(
        200,
      );
    }
    const account = await newAccount();
    const refused = await recover({ email: account.email });
    await expectProblem(refused, 429, { detail: /DefaultRateLimitAuth/ });
    expect(Number(refused.headers.get('retry-after'))).toBe(15 * 60 - 1);
    expect(await mailsTo(account.email)).toEqual([]);
  });

  it.each([
    ['no email', {}, 'email', 'Required'],
    ['an empty email', { email: '' }, 'email', expect.any(String)],
    ['a number', { email: 42 }, 'email', expect.any(String)],
    ['not an email address', { email: 'not-an-email' }, 'email', 'must be an email address'],
    ['an unknown field', { email: 'a@example.com', extra: 1 }, 'extra', 'Unknown field'],
  ])('refuses %s with a 400 naming the field, writing nothing', async (_label, body, field, message) => {
    const before = await counts();
    const problem = await expectProblem(await recover(body), 400);
    expect(problem.errors).toEqual({ [field]: [message] });
    expect(await counts()).toEqual(before);
  });
});

describe('PUT /api/auth/change-password-with-recovery-code', () => {
  it('sets the new password with the mailed code, clears must-change-password and signs out every session', async () => {
    const account = await newAccount({ mustChangePassword: true });
    const session = await login(api, account.email);
    const code = await mailedCode(account.email);

    const response = await change({ email: account.email, password: NEW_PASSWORD, recoveryCode: code });
    expect(response.status).toBe(200);
    expect(await response.json()).toEqual({ message: expect.stringMatching(/password has been changed/) });

    // the new password logs in with the full scope; the old one no longer does
    const tokens = await login(api, account.email, NEW_PASSWORD);
    expect(decodeJwt(tokens.accessToken).scope).toBe('platform');
    await expectProblem(
      await api.fetch('/api/auth/login', {
        method: 'POST',
        json: { email: account.email, password: TEST_PASSWORD },
      }),
      400,
    );
    // the session from before the recovery cannot be refreshed
    const refreshed = await api.fetch('/api/auth/refresh', {
      method: 'POST',
      json: { refreshToken: session.refreshToken },
    });
    expect(refreshed.status).toBe(401);
    // while the new login's session can
    const fresh = await api.fetch('/api/auth/refresh', {
      method: 'POST',
      json: { refreshToken: tokens.refreshToken },
    });
    expect(fresh.status).toBe(200);

    const state = await recoveryState(account.id);
    expect(state).toMatchObject({ must_change_password: false, recovery_failures: 0 });
    const [row] = await api.deps.knex('recovery_codes').where({ account_id: account.id });
    expect(row.used_at).toEqual(api.clock.now());
  });

  it('works once: the same code a second time is a wrong code', async () => {
    const account = await newAccount();
    const code = await mailedCode(account.email);
    expect((await change({ email: account.email, password: NEW_PASSWORD, recoveryCode: code })).status).toBe(
      200,
    );
    await expectProblem(
      await change({ email: account.email, password: 'Another-Password-3#', recoveryCode: code }),
      400,
      { detail: /recovery code is wrong/ },
    );
    await login(api, account.email, NEW_PASSWORD);
  });

  it('accepts the code in lower case, without its hyphen, with blanks', async () => {
    const account = await newAccount();
    const code = await mailedCode(account.email);
    const typed = ` ${code.replace('-', '').toLowerCase()} `;
    expect((await change({ email: account.email, password: NEW_PASSWORD, recoveryCode: typed })).status).toBe(
      200,
    );
  });

  it('refuses a code 30 minutes after it was mailed', async () => {
    const account = await newAccount();
    const code = await mailedCode(account.email);
    api.clock.advance(30 * MINUTE);
    const before = await recoveryState(account.id);
    await expectProblem(
      await change({ email: account.email, password: NEW_PASSWORD, recoveryCode: code }),
      400,
      { detail: /expired/ },
    );
    expect((await recoveryState(account.id))?.password_hash).toBe(before?.password_hash);

    // one second earlier it would have worked
    const fresh = await mailedCode(account.email);
    api.clock.advance(30 * MINUTE - SECOND);
    expect((await change({ email: account.email, password: NEW_PASSWORD, recoveryCode: fresh })).status).toBe(
      200,
    );
  });

  it('honours only the newest code, also once that one is used', async () => {
    const account = await newAccount();
    const older = await mailedCode(account.email);
    const newer = await mailedCode(account.email);
    await expectProblem(
      await change({ email: account.email, password: NEW_PASSWORD, recoveryCode: older }),
      400,
    );
    expect((await change({ email: account.email, password: NEW_PASSWORD, recoveryCode: newer })).status).toBe(
      200,
    );
    await expectProblem(
      await change({ email: account.email, password: 'Another-Password-3#', recoveryCode: older }),
      400,
    );
    await login(api, account.email, NEW_PASSWORD);
  });

  it('answers a wrong code 400 and counts it; an unknown email gets the very same 400', async () => {
    const account = await newAccount();
    await mailedCode(account.email);
    const wrong = await expectProblem(
      await change({ email: account.email, password: NEW_PASSWORD, recoveryCode: WRONG_CODE }),
      400,
    );
    expect((await recoveryState(account.id))?.recovery_failures).toBe(1);
    const unknown = await expectProblem(
      await change({ email: 'nobody-here@example.com', password: NEW_PASSWORD, recoveryCode: WRONG_CODE }),
      400,
    );
    const { traceId: _a, ...wrongBody } = wrong;
    const { traceId: _b, ...unknownBody } = unknown;
    expect(unknownBody).toEqual(wrongBody);
    expect(wrongBody.errors).toBeUndefined();
  });

  it('blocks recovery at the 5th wrong code: 403, even with the right code, and no new code', async () => {
    const account = await newAccount();
    const code = await mailedCode(account.email);
    for (let strike = 1; strike < MAX_RECOVERY_FAILURES; strike++) {
      await expectProblem(
        await change({ email: account.email, password: NEW_PASSWORD, recoveryCode: WRONG_CODE }),
        400,
      );
      expect((await recoveryState(account.id))?.recovery_failures).toBe(strike);
    }
    const blocked = await expectProblem(
      await change({ email: account.email, password: NEW_PASSWORD, recoveryCode: WRONG_CODE }),
      403,
      { detail: /recovery of this account is blocked for 24 hours after 5 wrong recovery codes/ },
    );
    const state = await recoveryState(account.id);
    expect(state?.recovery_failures).toBe(5);
    expect(state?.recovery_blocked_until).toEqual(new Date(api.clock.now().getTime() + 24 * HOUR));

    // the right code is refused the same way, and changes nothing
    const { traceId: _a, ...blockedBody } = blocked;
    const right = await expectProblem(
      await change({ email: account.email, password: NEW_PASSWORD, recoveryCode: code }),
      403,
    );
    const { traceId: _b, ...rightBody } = right;
    expect(rightBody).toEqual(blockedBody);
    expect(await recoveryState(account.id)).toEqual(state);
    await login(api, account.email);
  });

  it('lifts the block 24 hours after it began (test clock); the count then starts afresh', async () => {
    const account = await newAccount();
    await strikeOut(account.email);
    api.clock.advance(24 * HOUR - SECOND);
    await expectProblem(
      await change({ email: account.email, password: NEW_PASSWORD, recoveryCode: WRONG_CODE }),
      403,
    );
    await recover({ email: account.email });
    expect(await mailsTo(account.email)).toEqual([]);

    api.clock.advance(SECOND);
    // one wrong code is a plain strike again, not a new block
    await expectProblem(
      await change({ email: account.email, password: NEW_PASSWORD, recoveryCode: WRONG_CODE }),
      400,
    );
    expect(await recoveryState(account.id)).toMatchObject({
      recovery_failures: 1,
      recovery_blocked_until: null,
    });
    const code = await mailedCode(account.email);
    expect((await change({ email: account.email, password: NEW_PASSWORD, recoveryCode: code })).status).toBe(
      200,
    );
    expect((await recoveryState(account.id))?.recovery_failures).toBe(0);
    await login(api, account.email, NEW_PASSWORD);
  });

  it('voids the outstanding code when it blocks, so an unblock gives no guesser 5 more tries at it', async () => {
    const account = await newAccount();
    const code = await mailedCode(account.email);
    await strikeOut(account.email);
    const unblocked = await unblock('/api/accounts/unblock-recovery-code', world.pmc.full.token, {
      email: account.email,
    });
    expect(unblocked.status).toBe(200);
    await expectProblem(
      await change({ email: account.email, password: NEW_PASSWORD, recoveryCode: code }),
      400,
    );
    await login(api, account.email);
  });

  it('answers the 5th wrong code for an unknown email with the same 403, so blocks reveal no accounts', async () => {
    const account = await newAccount();
    const known = await strikeOut(account.email);
    const unknown = await strikeOut('nobody-here@example.com');
    const { traceId: _a, ...knownBody } = known;
    const { traceId: _b, ...unknownBody } = unknown;
    expect(unknownBody).toEqual(knownBody);
  });

  it('counts concurrent wrong codes exactly: 10 at once are 4 strikes, a block and 5 refusals', async () => {
    const account = await newAccount();
    const responses = await Promise.all(
      Array.from({ length: 10 }, () =>
        change({ email: account.email, password: NEW_PASSWORD, recoveryCode: WRONG_CODE }),
      ),
    );
    const statuses = responses.map((response) => response.status).sort();
    expect(statuses).toEqual([400, 400, 400, 400, 403, 403, 403, 403, 403, 403]);
    expect((await recoveryState(account.id))?.recovery_failures).toBe(MAX_RECOVERY_FAILURES);
  });

  it('lets one of several concurrent uses of a code win', async () => {
    const account = await newAccount();
    const code = await mailedCode(account.email);
    const responses = await Promise.all(
      ['First-Password-1!', 'Second-Password-2!', 'Third-Password-3!'].map((password) =>
        change({ email: account.email, password, recoveryCode: code }),
      ),
    );
    expect(responses.map((response) => response.status).sort()).toEqual([200, 400, 400]);
  });

  it('refuses a weak password with a 400 naming the rule, without using the code or counting a strike', async () => {
    const account = await newAccount();
    const code = await mailedCode(account.email);
    const before = await counts();
    await expectProblem(
      await change({ email: account.email, password: 'weakpassword', recoveryCode: code }),
      400,
      { errors: { password: ['must mix at least three of: lower case, upper case, digits, symbols'] } },
    );
    await expectProblem(await change({ email: account.email, password: 'Sh0rt!', recoveryCode: code }), 400, {
      errors: { password: ['must be at least 10 characters long'] },
    });
    expect(await counts()).toEqual(before);
    expect((await change({ email: account.email, password: NEW_PASSWORD, recoveryCode: code })).status).toBe(
      200,
    );
  });

  it('limits one client address to 20 tries per 15 minutes: 429 with Retry-After', async () => {
    startOfWindow(15 * MINUTE);
    for (let attempt = 1; attempt <= 20; attempt++) {
      const response = await change({
        email: `guess-${attempt}@example.com`,
        password: NEW_PASSWORD,
        recoveryCode: WRONG_CODE,
      });
      expect(response.status, `attempt ${attempt}`).toBe(400);
    }
    const account = await newAccount();
    const code = await latestCode(account.email).catch(() => WRONG_CODE);
    const refused = await change({ email: account.email, password: NEW_PASSWORD, recoveryCode: code });
    await expectProblem(refused, 429, { detail: /DefaultRateLimitAuth/ });
    expect(Number(refused.headers.get('retry-after'))).toBe(15 * 60 - 1);
    expect((await recoveryState(account.id))?.recovery_failures).toBe(0);
  });

  it.each([
    ['no body fields', {}, ['email', 'password', 'recoveryCode']],
    ['a missing code', { email: 'a@example.com', password: NEW_PASSWORD }, ['recoveryCode']],
    [
      'an empty code',
      { email: 'a@example.com', password: NEW_PASSWORD, recoveryCode: ' ' },
      ['recoveryCode'],
    ],
    [
      'a numeric code',
      { email: 'a@example.com', password: NEW_PASSWORD, recoveryCode: 1234 },
      ['recoveryCode'],
    ],
    ['an email that is none', { email: 'x', password: NEW_PASSWORD, recoveryCode: 'AAAA-BBBB' }, ['email']],
    [
      'an unknown field',
      { email: 'a@example.com', password: NEW_PASSWORD, recoveryCode: 'AAAA-BBBB', code: 'x' },
      ['code'],
    ],
  ])('refuses %s with a 400 naming the fields, writing nothing', async (_label, body, fields) => {
    const account = await newAccount();
    await mailedCode(account.email);
    const before = await counts();
    const problem = await expectProblem(await change(body), 400);
    expect(Object.keys(problem.errors ?? {}).sort()).toEqual(fields);
    expect(await counts()).toEqual(before);
  });
});

describe.each([['/api/account/unblock-recovery-code'], ['/api/accounts/unblock-recovery-code']])(
  'POST %s',
  (path) => {
    it('unblocks an account in the caller’s scope: 200 { email, unblocked }, and recovery works again', async () => {
      const account = await newAccount();
      await strikeOut(account.email);
      const response = await unblock(path, world.pmc.full.token, { email: account.email.toUpperCase() });
      expect(response.status).toBe(200);
      expect(await response.json()).toEqual({ email: account.email, unblocked: true });
      expect(await recoveryState(account.id)).toMatchObject({
        recovery_failures: 0,
        recovery_blocked_until: null,
      });
      const code = await mailedCode(account.email);
      expect(
        (await change({ email: account.email, password: NEW_PASSWORD, recoveryCode: code })).status,
      ).toBe(200);
    });

    it('forgets wrong codes of an account that is not blocked, and answers the same', async () => {
      const account = await newAccount();
      await expectProblem(
        await change({ email: account.email, password: NEW_PASSWORD, recoveryCode: WRONG_CODE }),
        400,
      );
      const response = await unblock(path, world.pmc.full.token, { email: account.email });
      expect(response.status).toBe(200);
      expect(await response.json()).toEqual({ email: account.email, unblocked: true });
      expect((await recoveryState(account.id))?.recovery_failures).toBe(0);
    });

    it('lets an Admin unblock any account', async () => {
      const account = await newAccount({ managedBy: world.otherPmc.id });
      await strikeOut(account.email);
      const response = await unblock(path, world.admin.full.token, { email: account.email });
      expect(response.status).toBe(200);
      expect((await recoveryState(account.id))?.recovery_blocked_until).toBeNull();
    });

    it('answers 404 for an account outside the caller’s scope, an unknown and a deleted one, changing nothing', async () => {
      const outside = await newAccount({ managedBy: world.otherPmc.id });
      await strikeOut(outside.email);
      const deleted = await newAccount();
      await strikeOut(deleted.email);
      await api.deps.knex('accounts').where({ id: deleted.id }).update({ deleted: api.clock.now() });
      const before = await counts();
      for (const email of [
        outside.email,
        world.otherPmc.full.email,
        'nobody-here@example.com',
        deleted.email,
      ]) {
        await expectProblem(await unblock(path, world.pmc.full.token, { email }), 404, {
          detail: `No account with the email ${email} was found`,
        });
      }
      expect(await counts()).toEqual(before);
    });

    it('is for Admin and Property Management Company only (403 for the others)', async () => {
      await expectAccessRules(api, world, {
        method: 'POST',
        path,
        body: (caller: { full: { email: string } }) => ({ email: caller.full.email }),
        allow: [PartyType.Admin, PartyType.PropertyManagementCompany],
      });
    });

    it('refuses bad input with a 400 naming the field, writing nothing', async () => {
      const before = await counts();
      for (const [body, field] of [
        [{}, 'email'],
        [{ email: 'not-an-email' }, 'email'],
        [{ email: world.pmc.full.email, other: true }, 'other'],
      ] as const) {
        const problem = await expectProblem(await unblock(path, world.pmc.full.token, body), 400);
        expect(Object.keys(problem.errors ?? {})).toEqual([field]);
      }
      expect(await counts()).toEqual(before);
    });
  },
);

it('keeps /api/accounts/unblock-recovery-code a path of its own, not account "unblock-recovery-code"', async () => {
  const response = await api.fetch('/api/accounts/unblock-recovery-code', { token: world.pmc.full.token });
  await expectProblem(response, 405);
  expect(response.headers.get('allow')).toBe('POST');
});

describe('POST /api/accounts/{id}/activation-message', () => {
  it('mails the account a code with which it sets its first password: 200 { sent: true }', async () => {
    const account = await newAccount();
    await api.deps.knex('accounts').where({ id: account.id }).update({ password_hash: null });
    const response = await activate(account.id, world.pmc.full.token);
    expect(response.status).toBe(200);
    expect(await response.json()).toEqual({ sent: true });

    const mails = await mailsTo(account.email);
    expect(mails).toHaveLength(1);
    expect(mails[0]).toMatchObject({
      kind: 'password-recovery',
      subject: 'Set the password of your account',
    });
    const code = await latestCode(account.email);
    const rows = await api.deps.knex('recovery_codes').where({ account_id: account.id });
    expect(JSON.stringify(rows).toUpperCase()).not.toContain(code.replace('-', ''));
    expect((await change({ email: account.email, password: NEW_PASSWORD, recoveryCode: code })).status).toBe(
      200,
    );
    await login(api, account.email, NEW_PASSWORD);
  });

  it('replaces a code mailed earlier', async () => {
    const account = await newAccount();
    const older = await mailedCode(account.email);
    expect((await activate(account.id, world.admin.full.token)).status).toBe(200);
    await expectProblem(
      await change({ email: account.email, password: NEW_PASSWORD, recoveryCode: older }),
      400,
    );
    const newer = await latestCode(account.email);
    expect((await change({ email: account.email, password: NEW_PASSWORD, recoveryCode: newer })).status).toBe(
      200,
    );
  });

  it('answers 404 for an account outside the caller’s scope, an unknown and a deleted one, mailing nothing', async () => {
    const outside = await newAccount({ managedBy: world.otherPmc.id });
    const deleted = await newAccount();
    await api.deps.knex('accounts').where({ id: deleted.id }).update({ deleted: api.clock.now() });
    const before = await counts();
    for (const id of [outside.id, world.otherPmc.full.id, world.admin.full.id, deleted.id, 2147483647]) {
      await expectProblem(await activate(id, world.pmc.full.token), 404, {
        detail: `Account ${id} was not found`,
      });
    }
    expect(await counts()).toEqual(before);
  });

  it('answers 409 while the account’s recovery is blocked, mailing nothing', async () => {
    const account = await newAccount();
    await strikeOut(account.email);
    await expectProblem(await activate(account.id, world.pmc.full.token), 409, {
      detail: /unblock it first/,
    });
    expect(await mailsTo(account.email)).toEqual([]);
  });

  it('is for Admin and Property Management Company only (403 for the others)', async () => {
    await expectAccessRules(api, world, {
      method: 'POST',
      path: (caller) => `/api/accounts/${caller.full.id}/activation-message`,
      allow: [PartyType.Admin, PartyType.PropertyManagementCompany],
    });
  });

  it('refuses an id that is not one with a 400, writing nothing', async () => {
    const before = await counts();
    for (const id of ['abc', '0', '-1', '2147483648']) {
      const problem = await expectProblem(await activate(id, world.pmc.full.token), 400);
      expect(Object.keys(problem.errors ?? {})).toEqual(['id']);
    }
    expect(await counts()).toEqual(before);
  });
});
