import type { Knex } from '@platform/db';
import type { Principal } from '../auth/principal';
import type { AppDeps } from '../deps';

/** What a write sees: its transaction, who writes, and when. */
export interface WriteContext {
  trx: Knex.Transaction;
  principal: Principal;
  now: Date;
}

/**
 * The one write path: every service write runs in here, in one transaction, so it lands whole or
 * not at all. Change capture (entity_changes, webhooks, NOTIFY) hooks in here too.
 */
export function runWrite<T>(
  deps: AppDeps,
  principal: Principal,
  write: (context: WriteContext) => Promise<T>,
): Promise<T> {
  return deps.knex.transaction((trx) => write({ trx, principal, now: deps.now() }));
}
