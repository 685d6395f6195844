/**
 * The recovery numbers come from config: parsing of the variables, and an API started with other
 * values than the defaults that honours them.
 */
import { PartyType } from '@platform/shared';
import { describe, expect, it } from 'vitest';
import { loadConfig } from '../../config';
import { expectProblem } from '../../../tests/support/http';
import { buildAccount, buildParty, useTestApi } from '../../../tests/support/api';
import { MAX_RECOVERY_FAILURES } from './password-recovery-service';

const MINUTE = 60_000;
const DATABASE_URL = 'postgres://localhost/x';

describe('recovery configuration', () => {
  it('defaults to codes valid 30 minutes, a 24-hour block, 5 per email and 20 per address per 15 minutes', () => {
    const config = loadConfig({ DATABASE_URL });
    expect(config.RECOVERY_CODE_TTL).toBe(30 * MINUTE);
    expect(config.RECOVERY_BLOCK_DURATION).toBe(24 * 60 * MINUTE);
    expect(config.RECOVERY_RATE_LIMIT_PER_EMAIL).toEqual({ limit: 5, windowMs: 15 * MINUTE });
    expect(config.RECOVERY_RATE_LIMIT_PER_ADDRESS).toEqual({ limit: 20, windowMs: 15 * MINUTE });
  });

  it('reads rate limits written <count>/<window>', () => {
    const config = loadConfig({ DATABASE_URL, RECOVERY_RATE_LIMIT_PER_EMAIL: ' 3 / 1h ' });
    expect(config.RECOVERY_RATE_LIMIT_PER_EMAIL).toEqual({ limit: 3, windowMs: 60 * MINUTE });
  });

  it.each(['5', '0/15m', '5/15', '5/10ms', 'x/15m', '/15m'])('refuses the rate limit "%s"', (value) => {
    expect(() => loadConfig({ DATABASE_URL, RECOVERY_RATE_LIMIT_PER_ADDRESS: value })).toThrow(
      /RECOVERY_RATE_LIMIT_PER_ADDRESS: .* is not a rate limit/,
    );
  });

  it('refuses a block or a rate-limit window longer than the day the prune job keeps their counts', () => {
    expect(loadConfig({ DATABASE_URL, RECOVERY_BLOCK_DURATION: '24h' }).RECOVERY_BLOCK_DURATION).toBe(
      24 * 60 * MINUTE,
    );
    expect(() => loadConfig({ DATABASE_URL, RECOVERY_BLOCK_DURATION: '25h' })).toThrow(
      /RECOVERY_BLOCK_DURATION: at most 24h: the prune job deletes rate-limit counts/,
    );
    expect(() => loadConfig({ DATABASE_URL, RECOVERY_RATE_LIMIT_PER_EMAIL: '5/48h' })).toThrow(
      /RECOVERY_RATE_LIMIT_PER_EMAIL: "5\/48h": the window must be at most 24h/,
    );
  });
});

describe('an API with other recovery numbers', () => {
  const { api } = useTestApi({
    config: {
      RECOVERY_CODE_TTL: '5m',
      RECOVERY_BLOCK_DURATION: '2h',
      RECOVERY_RATE_LIMIT_PER_EMAIL: '2/1m',
    },
  });

  it('honours them', async () => {
    const party = await buildParty(api.deps, { type: PartyType.PropertyManagementCompany });
    const { id, email } = await buildAccount(api.deps, { partyId: party.id });
    api.clock.set(new Date(Math.ceil(Date.now() / MINUTE) * MINUTE + 1000));
    const recover = () => api.fetch('/api/auth/recover-password', { method: 'POST', json: { email } });

    expect((await recover()).status).toBe(200);
    const [mail] = await api.deps.knex('mail_outbox').where({ to_address: email });
    expect(mail.text_body).toMatch(/valid for 5 minutes/);
    const [code] = await api.deps.knex('recovery_codes').where({ account_id: id });
    expect(code.expires_at.getTime() - api.clock.now().getTime()).toBe(5 * MINUTE);

    expect((await recover()).status).toBe(200);
    const refused = await recover();
    await expectProblem(refused, 429, { detail: /DefaultRateLimitAuth/ });
    expect(refused.headers.get('retry-after')).toBe('59');

    for (let strike = 1; strike <= MAX_RECOVERY_FAILURES; strike++) {
      await api.fetch('/api/auth/change-password-with-recovery-code', {
        method: 'PUT',
        json: { email, password: 'New-Password-2?', recoveryCode: 'OOOO-IIII' },
      });
    }
    const [account] = await api.deps.knex('accounts').where({ id });
    expect(account.recovery_blocked_until).toEqual(new Date(api.clock.now().getTime() + 2 * 60 * MINUTE));
    const blocked = await api.fetch('/api/auth/change-password-with-recovery-code', {
      method: 'PUT',
      json: { email, password: 'New-Password-2?', recoveryCode: 'OOOO-IIII' },
    });
    await expectProblem(blocked, 403, { detail: /blocked for 2 hours/ });
  });
});
