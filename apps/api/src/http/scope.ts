import { PartyType } from '@platform/shared';
import type { Knex } from '@platform/db';
import type { Principal } from '../auth/principal';

/**
 * Limits `query` to rows whose party column the caller may see (design part 5): Admin sees all;
 * any other party sees its own party and the parties it manages.
 */
export function scopeToParties(
  query: Knex.QueryBuilder,
  partyColumn: string,
  principal: Principal,
): Knex.QueryBuilder {
  if (principal.partyType === PartyType.Admin) return query;
  return query.where((q) =>
    q
      .where(partyColumn, principal.partyId)
      .orWhereIn(partyColumn, (sub) =>
        sub.from('parties').select('id').where('managed_by_party_id', principal.partyId).whereNull('deleted'),
      ),
  );
}
