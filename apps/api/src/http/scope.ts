import { PartyType, TokenScope } from '@platform/shared';
import type { Knex } from '@platform/db';
import type { Principal } from '../auth/principal';
import { AppError } from './errors';

/**
 * Whether the caller sees every party's data: an Admin's account does. A webhook token of an
 * Admin registration does not: it is handed to a target outside the platform and reads for its
 * party like any other (docs/dispatcher.md#what-the-api-lets-the-token-do); nor does a portal
 * session of an Admin party (docs/portal.md).
 */
export function seesAllParties(principal: Principal): boolean {
  return (
    principal.partyType === PartyType.Admin &&
    principal.scope !== TokenScope.Webhook &&
    principal.scope !== TokenScope.Portal
  );
}

/**
 * Limits `query` to rows whose party column the caller may see (docs/api.md#scope-of-data): Admin sees all;
 * any other party (and any webhook token) sees its own party and the parties it manages; a portal
 * session its own party only.
 */
export function scopeToParties(
  query: Knex.QueryBuilder,
  partyColumn: string,
  principal: Principal,
): Knex.QueryBuilder {
  if (seesAllParties(principal)) return query;
  // a portal session shows exactly its party, never the parties that party manages
  if (principal.portal) return query.where(partyColumn, principal.partyId);
  return query.where((q) =>
    q
      .where(partyColumn, principal.partyId)
      .orWhereIn(partyColumn, (sub) =>
        sub.from('parties').select('id').where('managed_by_party_id', principal.partyId).whereNull('deleted'),
      ),
  );
}

/**
 * Limits `query` to the webhook registrations (as `alias`) the caller may see: those of the parties
 * of its scope (`scopeToParties`) and, for an endpoint-portal session limited to some
 * registrations, only those (docs/portal.md#security-model). Every webhook read and action
 * reaches its registration through here, so a portal token's view of another party's ids is a 404.
 */
export function scopeToRegistrations(
  query: Knex.QueryBuilder,
  alias: string,
  principal: Principal,
): Knex.QueryBuilder {
  scopeToParties(query, `${alias}.party_id`, principal);
  const only = principal.portal?.registrationIds;
  return only ? query.whereIn(`${alias}.id`, only) : query;
}

/** The live party `partyId` when the caller may see it (`scopeToParties`), else a 404. */
export async function requireVisibleParty(knex: Knex, principal: Principal, partyId: number): Promise<void> {
  const party = await scopeToParties(
    knex('parties as p').where('p.id', partyId).whereNull('p.deleted'),
    'p.id',
    principal,
  ).first('p.id');
  if (!party) throw new AppError('NotFound', `Party ${partyId} was not found`);
}
