import type { Knex } from 'knex';
import * as identity from './20261122000000_identity';
import * as webhooks from './20261122000100_webhooks';

/**
 * Every migration, in order. Listed explicitly rather than read from the folder, so the same
 * list runs under tsx, vitest and bundlers. Forward-only: add a file, never edit a landed one.
 */
export const MIGRATIONS: ReadonlyArray<
  readonly [name: string, migration: { up(knex: Knex): Promise<void> }]
> = [
  ['20261122000000_identity', identity],
  ['20261122000100_webhooks', webhooks],
];
