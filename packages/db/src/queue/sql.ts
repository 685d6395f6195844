import type { Knex } from 'knex';
import type { WebhookState } from '@platform/shared';

/**
 * A list of states for an SQL `in (…)`, written into a statement's text from `WebhookState`
 * (never bare numbers). Statements are built once, at module load, so each keeps one constant
 * text: a named prepared statement must stand for one SQL text, and the planner sees constants
 * (the partial indexes on `state in (1, 2)` match only a constant list).
 */
export const sqlList = (states: readonly WebhookState[]): string => states.join(', ');

/** Bindings holding arrays, which node-postgres sends as Postgres arrays (knex's types do not say so). */
export const arrays = (values: unknown[]) => values as Knex.RawBinding[];
