import type { Knex } from 'knex';

/** Filled in by the resources work. */
export async function up(_knex: Knex): Promise<void> {}
