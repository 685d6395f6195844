import type { Knex } from 'knex';
import { WebhookState } from '@platform/shared';
import { replayEntityChanges } from './replay';

/** What resending one webhook did: the new webhook, or why there is none. */
export type ResendOutcome =
  | { outcome: 'resent'; webhookId: number }
  | { outcome: 'not-found' }
  | { outcome: 'not-successful'; state: number }
  | { outcome: 'superseded'; groupKey: string; groupSeq: number; latestSeq: number }
  | { outcome: 'registration-deleted' }
  | { outcome: 'not-subscribed' };

interface ResentRow {
  registration_id: number;
  bucket: number;
  entity_change_id: string;
  state: number;
  group_key: string | null;
  group_seq: string | null;
}

/**
 * Resends a Successful webhook, in the caller's transaction: a new webhook of the same
 * registration referencing the same recorded change (so the same body), written by replay's own
 * statement (`replayEntityChanges`), recorded under `actionId`.
 *
 * A group is never reordered: the new webhook enters its group at the tail, like any new one.
 * That is only sound while the resent webhook is the group's latest (its `group_seq` is the
 * group's `next_seq`): resending an older one would deliver a stale state of the entity after a
 * newer one, so it is refused as `superseded` (docs/admin.md › Resend). The group row is locked
 * (FOR UPDATE) before that check, so an enqueue of the same group cannot slip in between the check
 * and the new webhook.
 */
export async function resendWebhook(
  trx: Knex.Transaction,
  options: { webhookId: number; actionId: number },
): Promise<ResendOutcome> {
  const webhook = (await trx('webhooks')
    .where({ id: options.webhookId })
    .first('registration_id', 'bucket', 'entity_change_id', 'state', 'group_key', 'group_seq')) as
    ResentRow | undefined;
  if (!webhook) return { outcome: 'not-found' };
  // Successful is final: no writer moves it on, so the state read needs no lock
  if (webhook.state !== WebhookState.Successful) return { outcome: 'not-successful', state: webhook.state };
  if (webhook.group_key !== null) {
    const group = (await trx('webhook_groups')
      .where({
        bucket: webhook.bucket,
        registration_id: webhook.registration_id,
        group_key: webhook.group_key,
      })
      .forUpdate()
      .first('next_seq')) as { next_seq: string } | undefined;
    const latestSeq = Number(group?.next_seq ?? 0);
    const groupSeq = Number(webhook.group_seq);
    if (latestSeq > groupSeq) {
      return { outcome: 'superseded', groupKey: webhook.group_key, groupSeq, latestSeq };
    }
  }
  const changeId = Number(webhook.entity_change_id);
  const outcome = (
    await replayEntityChanges(trx, {
      registration: { id: webhook.registration_id, bucket: webhook.bucket },
      changeIds: [changeId],
      actionId: options.actionId,
    })
  ).get(changeId);
  if (outcome === 'registration-deleted' || outcome === 'not-subscribed') return { outcome };
  const created = (await trx('webhooks')
    .where({
      bucket: webhook.bucket,
      entity_change_id: changeId,
      registration_id: webhook.registration_id,
      last_action_id: options.actionId,
    })
    .first('id')) as { id: string };
  return { outcome: 'resent', webhookId: Number(created.id) };
}
