import { type Knex } from '@platform/db';
import { signWebhookToken, type SigningKey } from '@platform/crypto';
import type { PartyType } from '@platform/shared';
import type { Logger } from 'pino';
import type { BearerTokenSource } from './delivery-request';

/** A token is signed anew this long before it expires, so a target never receives one about to lapse. */
export const WEBHOOK_TOKEN_RENEW_BEFORE_MS = 5 * 60_000;

export interface WebhookTokenSourceOptions {
  knex: Knex;
  /** The API's signing key: its JWKS verifies what is signed here. */
  key: SigningKey;
  /** The API's `JWT_ISSUER` and `JWT_AUDIENCE`, which it checks on every token. */
  issuer: string;
  audience: string;
  logger?: Logger;
  now?: () => Date;
}

interface CachedToken {
  token: Promise<string>;
  /** When to sign a new one (epoch ms); infinite while the signature is under way. */
  renewAt: number;
}

/**
 * The service-signed bearer tokens of authorization types 2 and 3 (docs/dispatcher.md#the-webhook-token): an RS256 JWT of
 * scope `webhook` for the registration's party, valid 30 minutes (`signWebhookToken`). One token
 * per registration is kept in memory and reused until 5 minutes before it expires, so a busy
 * registration costs one signature and one party read per 25 minutes, and concurrent deliveries
 * of one registration share the signature under way. Each replica keeps its own; a target may
 * see tokens of several replicas at once, all valid.
 */
export function createWebhookTokenSource(options: WebhookTokenSourceOptions): BearerTokenSource {
  const now = options.now ?? (() => new Date());
  const cache = new Map<number, CachedToken>();

  const sign = async (registration: { id: number; partyId: number }, entry: CachedToken) => {
    const party = (await options
      .knex('parties')
      .where({ id: registration.partyId })
      .first('name', 'type')) as { name: string; type: PartyType } | undefined;
    if (!party) throw new Error(`party ${registration.partyId} of registration ${registration.id} not found`);
    const { token, expiresAt } = await signWebhookToken(
      options.key,
      {
        registrationId: registration.id,
        partyId: registration.partyId,
        partyName: party.name,
        partyType: party.type,
      },
      { issuer: options.issuer, audience: options.audience, now: now() },
    );
    entry.renewAt = expiresAt.getTime() - WEBHOOK_TOKEN_RENEW_BEFORE_MS;
    options.logger?.debug(
      { registrationId: registration.id, expiresAt: expiresAt.toISOString() },
      'webhook bearer token signed',
    );
    return token;
  };

  return (registration) => {
    const at = now().getTime();
    const cached = cache.get(registration.id);
    if (cached && at < cached.renewAt) return cached.token;
    // tokens of registrations that stopped delivering would otherwise stay forever
    for (const [id, entry] of cache) if (entry.renewAt <= at) cache.delete(id);
    const entry: CachedToken = { token: Promise.resolve(''), renewAt: Number.POSITIVE_INFINITY };
    entry.token = sign(registration, entry).catch((error: unknown) => {
      // the next delivery tries again rather than inheriting this failure
      if (cache.get(registration.id) === entry) cache.delete(registration.id);
      throw error;
    });
    cache.set(registration.id, entry);
    return entry.token;
  };
}
