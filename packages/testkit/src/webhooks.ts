import type { Knex } from '@platform/db';
import type { WebhookState } from '@platform/shared';
import { eventually } from './wait';

/**
 * Empties the queue's tables (webhooks, attempts, groups, per-minute stats), the changes, the
 * registrations with their events and targets, and the mail outbox: between tests that share a
 * database.
 */
export async function truncateWebhooks(knex: Knex): Promise<void> {
  await knex.raw(
    `truncate webhook_attempt_stats, webhook_attempts, webhooks, webhook_groups, entity_changes, webhook_events,
              webhook_registrations, webhook_targets, webhook_portal_sessions, mail_outbox,
              webhook_notification_settings, operator_notifications cascade`,
  );
}

// Reading what the dispatcher wrote.

export interface WebhookRow {
  id: number;
  registration_id: number;
  state: WebhookState;
  attempt_count: number;
  next_attempt_at: Date;
  completed_at: Date | null;
  locked_by: string | null;
  group_key: string | null;
  group_seq: number | null;
}

export interface AttemptRow {
  number: number;
  started_at: Date;
  duration_ms: number;
  status_code: number | null;
  error_kind: string | null;
  response_body: string | null;
}

/** A webhook row straight from the table. */
export async function webhookRow(knex: Knex, id: number): Promise<WebhookRow> {
  return (await knex('webhooks')
    .where({ id })
    .first(
      'id',
      'registration_id',
      'state',
      'attempt_count',
      'next_attempt_at',
      'completed_at',
      'locked_by',
      'group_key',
      'group_seq',
    )) as WebhookRow;
}

/** The attempts of a webhook, oldest first. */
export function attemptsOf(knex: Knex, id: number): Promise<AttemptRow[]> {
  return knex('webhook_attempts')
    .where({ webhook_id: id })
    .orderBy('number')
    .select('number', 'started_at', 'duration_ms', 'status_code', 'error_kind', 'response_body');
}

/** A registration's attempts counted by error kind (`none` for successes). */
export async function attemptKindsOf(knex: Knex, registrationId: number): Promise<Record<string, number>> {
  const rows = (await knex('webhook_attempts as a')
    .join('webhooks as w', 'w.id', 'a.webhook_id')
    .where('w.registration_id', registrationId)
    .groupBy('a.error_kind')
    .select('a.error_kind')
    .count({ n: '*' })) as { error_kind: string | null; n: string | number }[];
  return Object.fromEntries(rows.map((row) => [row.error_kind ?? 'none', Number(row.n)]));
}

/** Waits until webhook `id` is in `state` (and, if given, has `attempts` attempt rows); answers the row. */
export async function waitForWebhook(
  knex: Knex,
  id: number,
  state: WebhookState,
  options: { attempts?: number; timeoutMs?: number } = {},
): Promise<WebhookRow> {
  let last: WebhookRow | undefined;
  try {
    await eventually(
      async () => {
        last = await webhookRow(knex, id);
        if (last.state !== state) return false;
        if (options.attempts === undefined) return true;
        return (await attemptsOf(knex, id)).length === options.attempts;
      },
      { timeoutMs: options.timeoutMs ?? 20_000, what: `webhook ${id} in state ${state}` },
    );
  } catch (error) {
    throw new Error(`${(error as Error).message}; last seen: ${JSON.stringify(last)}`);
  }
  return last!;
}

// Arranging a state.

/**
 * Test fixture: writes `state` (and, if given, `completed_at`) straight into webhooks `ids`,
 * bypassing the state machine on purpose, to arrange what deliveries or a bug would have left
 * behind. It moves no group lock and checks no transition. The only write of `webhooks.state`
 * outside the queue's statements (`packages/db/src/queue/`), so a grep finds every fabricated one.
 */
export async function setWebhookState(
  knex: Knex,
  ids: number | readonly number[],
  state: WebhookState,
  options: { completedAt?: Date | null } = {},
): Promise<void> {
  await knex('webhooks')
    .whereIn('id', typeof ids === 'number' ? [ids] : ids)
    .update({ state, ...(options.completedAt !== undefined && { completed_at: options.completedAt }) });
}
