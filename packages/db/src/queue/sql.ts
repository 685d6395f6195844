import type { Knex } from 'knex';
import type { WebhookState } from '@platform/shared';

/**
 * A list of states for an SQL `in (…)`, written into a statement's text from `WebhookState`
 * (never bare numbers). Statements are built once, at module load, so each keeps one constant
 * text: a named prepared statement must stand for one SQL text, and the planner sees constants
 * (the partial indexes on `state in (1, 2)` match only a constant list).
 */
export const sqlList = (states: readonly WebhookState[]): string => states.join(', ');

/**
 * The shard group filter of a statement on `alias`'s table (docs/scaling.md, R2): the rows of the
 * buckets `buckets` names (a queue function's `p_buckets`, or a statement's bound `?::int[]`, which
 * then takes the array twice), the group of buckets one shard holds, or of every bucket when it is
 * null, which is the one database's single group. A caller that passes the group (on Citus:
 * always) has each statement pruned to that group's shard.
 */
export const inBuckets = (alias: string, buckets = 'p_buckets'): string =>
  `(${buckets} is null or ${alias}.bucket = any(${buckets}))`;

/** Bindings holding arrays, which node-postgres sends as Postgres arrays (knex's types do not say so). */
export const arrays = (values: unknown[]) => values as Knex.RawBinding[];

/**
 * The `set` clause of the queue functions one event calls (`webhooks_claim`, `webhooks_enqueue`,
 * `webhooks_operator_apply`; docs/decisions.md › Database, docs/performance.md › Statements and
 * plans of the queue functions). The statements inside such a function are prepared once per
 * session; under the default `plan_cache_mode = auto` Postgres plans each afresh with the call's
 * values for the first five calls, and after that whenever the generic plan's estimate is dearer
 * than the custom ones', which for the claim's pick statement is every call: its planning took
 * about 2 of the 2.8 ms of an empty claim (psql, Postgres 15, the development VM). Their
 * statements have one shape for any input (arrays of ids, a cursor, a batch size, constant state
 * lists), so one generic plan each serves every call, and nested functions run with the caller's
 * setting.
 */
export const GENERIC_PLANS = 'set plan_cache_mode = force_generic_plan';

/**
 * The `set` clause of the functions that read the rows they are given by primary key
 * (`webhooks_lease`, `webhook_deliveries`): generic plans (`GENERIC_PLANS`: their statements take
 * arrays of ids, one shape for any input) and no sequential scan, so no statistics can make them
 * read a whole table for a few ids. Generic plans are theirs, not only their callers': called from
 * `webhooks_complete` (which keeps the default) to answer a released group's next webhook, the
 * deliveries' join was planned again on every call, 0.7–0.9 ms for one row against 0.08 ms with
 * its generic plan (a PL/pgSQL loop, Postgres 15, docs/performance.md). A session keeps a PL/pgSQL statement's plan until the table's
 * statistics change; planned while a young table is small (every fresh database, or one whose
 * autovacuum has not analyzed it yet, or never does), the plan scanned `webhooks`, the
 * `entity_changes` partitions and `webhook_events` whole and hash-joined them for every lease
 * as the table grew: 2.2 of the 2.7 ms of a notified claim of one row in the peers harness'
 * latency mode (`auto_explain`, docs/performance.md › The plans of a young database). Seq scans
 * stay possible where no index serves; they only cost more than any index path.
 */
export const PRIMARY_KEY_PLANS = `${GENERIC_PLANS} set enable_seqscan = off`;
