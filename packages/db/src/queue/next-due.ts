import type { Knex } from 'knex';
import { CLAIMABLE_WEBHOOK_STATES } from '@platform/shared';
import { prepared } from './prepared';
import { sqlList } from './sql';

const NEXT_DUE = `select min(next_attempt_at) as at from (
       select next_attempt_at from webhooks where state in (${sqlList(CLAIMABLE_WEBHOOK_STATES)}) order by next_attempt_at limit 1
     ) n`;

/** The earliest future `next_attempt_at` of a claimable webhook, to sleep until; null when none. */
export async function nextDueAt(knex: Knex): Promise<Date | null> {
  const { rows } = await knex
    .raw<{ rows: { at: Date | null }[] }>(NEXT_DUE)
    .options(prepared('webhooks-next-due'));
  return rows[0]?.at ?? null;
}
