import { PartyType, TokenScope } from '@platform/shared';
import type { Knex } from '@platform/db';
import type { Principal } from '../auth/principal';

/**
 * Whether the caller sees every party's data: an Admin's account does. A webhook token of an
 * Admin registration does not: it is handed to a target outside the platform and reads for its
 * party like any other (docs/dispatcher.md#what-the-api-lets-the-token-do).
 */
export function seesAllParties(principal: Principal): boolean {
  return principal.partyType === PartyType.Admin && principal.scope !== TokenScope.Webhook;
}

/**
 * Limits `query` to rows whose party column the caller may see (docs/api.md#scope-of-data): Admin sees all;
 * any other party (and any webhook token) sees its own party and the parties it manages.
 */
export function scopeToParties(
  query: Knex.QueryBuilder,
  partyColumn: string,
  principal: Principal,
): Knex.QueryBuilder {
  if (seesAllParties(principal)) return query;
  return query.where((q) =>
    q
      .where(partyColumn, principal.partyId)
      .orWhereIn(partyColumn, (sub) =>
        sub.from('parties').select('id').where('managed_by_party_id', principal.partyId).whereNull('deleted'),
      ),
  );
}
