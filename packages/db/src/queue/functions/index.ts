import type { Knex } from 'knex';
import { TIME_PARTITION_START_FUNCTION } from './time-partition-start';
import { TIME_PARTITIONS_ENSURE_FUNCTION } from './time-partitions-ensure';
import { WEBHOOK_DELIVERIES_FUNCTION } from './webhook-deliveries';
import { WEBHOOK_ENDPOINT_URL_FUNCTION } from './webhook-endpoint-url';
import { WEBHOOK_GROUPS_RELEASE_FUNCTION } from './webhook-groups-release';
import {
  WEBHOOK_BREAKERS_NOTIFY_FUNCTION,
  WEBHOOK_NOTIFICATION_RECIPIENTS_FUNCTION,
  WEBHOOK_NOTIFY_FUNCTION,
} from './webhook-notify';
import { WEBHOOK_PREVIOUS_SECRET_FUNCTION } from './webhook-previous-secret';
import { WEBHOOK_REGISTRATIONS_TARGET_FUNCTION } from './webhook-registrations-target';
import { WEBHOOK_SUBSCRIPTIONS_FUNCTION } from './webhook-subscriptions';
import { WEBHOOK_TARGET_HALF_OPEN_FUNCTION } from './webhook-target-half-open';
import { WEBHOOK_TARGET_ORIGIN_FUNCTION } from './webhook-target-origin';
import { WEBHOOK_TARGETS_RATE_LIMIT_FUNCTION } from './webhook-targets-rate-limit';
import { WEBHOOKS_CLAIM_FUNCTION } from './webhooks-claim';
import { WEBHOOKS_CLAIM_NOTIFIED_FUNCTION } from './webhooks-claim-notified';
import { WEBHOOKS_COMPLETE_FUNCTION } from './webhooks-complete';
import { WEBHOOKS_ENQUEUE_FUNCTION } from './webhooks-enqueue';
import { WEBHOOKS_LEASE_FUNCTION } from './webhooks-lease';
import { WEBHOOKS_OPERATOR_APPLY_FUNCTION } from './webhooks-operator-apply';

/**
 * Every function of the database, each a `create or replace function` statement
 * (docs/decisions.md#database); `packages/db/schema.sql` lists each by signature and the md5 of its
 * definition. In creation order: Postgres checks an SQL-language function's
 * body against what exists when it is created, so a function comes after the ones its SQL body
 * calls. The queue's functions are VOLATILE (the default): in READ COMMITTED each statement inside
 * takes a fresh snapshot, so a statement after a group lock sees what a producer holding that lock
 * committed meanwhile (one statement that waited for the lock would still read with its older
 * snapshot and could strand a group without a head).
 */
export const DATABASE_FUNCTIONS: readonly string[] = [
  TIME_PARTITION_START_FUNCTION,
  TIME_PARTITIONS_ENSURE_FUNCTION,
  WEBHOOK_TARGET_ORIGIN_FUNCTION,
  WEBHOOK_ENDPOINT_URL_FUNCTION,
  WEBHOOK_REGISTRATIONS_TARGET_FUNCTION,
  WEBHOOK_TARGETS_RATE_LIMIT_FUNCTION,
  WEBHOOK_PREVIOUS_SECRET_FUNCTION,
  WEBHOOK_DELIVERIES_FUNCTION,
  WEBHOOKS_LEASE_FUNCTION,
  WEBHOOKS_CLAIM_FUNCTION,
  WEBHOOKS_CLAIM_NOTIFIED_FUNCTION,
  WEBHOOK_GROUPS_RELEASE_FUNCTION,
  WEBHOOK_NOTIFICATION_RECIPIENTS_FUNCTION,
  WEBHOOK_NOTIFY_FUNCTION,
  WEBHOOK_BREAKERS_NOTIFY_FUNCTION,
  WEBHOOKS_COMPLETE_FUNCTION,
  WEBHOOK_TARGET_HALF_OPEN_FUNCTION,
  WEBHOOKS_OPERATOR_APPLY_FUNCTION,
  WEBHOOK_SUBSCRIPTIONS_FUNCTION,
  WEBHOOKS_ENQUEUE_FUNCTION,
];

const functionName = (statement: string): string => {
  const name = /create or replace function (\w+)\(/.exec(statement)?.[1];
  if (!name) throw new Error(`not a create or replace function statement: ${statement.slice(0, 80)}`);
  return name;
};

/**
 * Writes every function of `DATABASE_FUNCTIONS` (after the migrations, on every migrate), in one
 * transaction, so a function and the ones it calls change together. Two processes migrating at
 * once would otherwise fail with "tuple concurrently updated": the advisory lock makes them take
 * turns. A definition whose arguments changed is a new function beside the old one (an overload),
 * so afterwards every other function of these names, one this transaction did not write, is
 * dropped. (A changed return type `create or replace` refuses: drop the old signature in a
 * migration.)
 */
export async function applyDatabaseFunctions(knex: Knex): Promise<void> {
  await knex.transaction(async (trx) => {
    await trx.raw(`select pg_advisory_xact_lock(hashtext('platform.database-functions'))`);
    for (const statement of DATABASE_FUNCTIONS) await trx.raw(statement);
    const { rows } = await trx.raw<{ rows: { signature: string }[] }>(
      `select p.oid::regprocedure::text as signature from pg_proc p
        where p.pronamespace = 'public'::regnamespace and p.proname = any(?)
          and p.xmin <> pg_current_xact_id()::xid`,
      [DATABASE_FUNCTIONS.map(functionName)],
    );
    for (const { signature } of rows) await trx.raw(`drop function ${signature}`);
  });
}
