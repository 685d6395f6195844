import type { OperationSkipReason } from '@platform/shared';
import { ApiError, errorMessage } from '../../../lib/api-client';
import { actionAvailability, type WebhookAction } from '../../../lib/webhook-states';
import type { OperationFigures } from './operation-progress';

/** A selected row: its id and the state the table showed. */
export interface SelectedWebhook {
  id: number;
  state: number;
}

/** Why a selected row is left alone: the shown state does not allow the action, or the API refused. */
export type SelectedSkipReason = Extract<OperationSkipReason, 'final' | 'not-failed'> | 'refused';

/**
 * Runs one single-webhook action (`perform`: POST /api/webhooks/{id}/{action}) per selected row,
 * one after another, and reports the same figures as a bulk operation after each row:
 * - a row whose shown state does not allow the action is skipped without a request
 *   (`not-failed` for a retry, `final` for abort and resolve);
 * - a 409 (its state moved on since the table was read) is skipped as `refused`;
 * - any other refusal (403, a network failure) stops the run as `failed` with its message: the
 *   rows before it are changed, the rest are not.
 * Selected rows are at most one page (100), so the requests stay few; an action on more goes
 * through the bulk endpoint with the table's filter instead.
 */
export async function actOnSelected(
  selected: readonly SelectedWebhook[],
  action: WebhookAction,
  perform: (webhookId: number) => Promise<unknown>,
  onProgress: (figures: OperationFigures) => void = () => {},
  now: () => string = () => new Date().toISOString(),
): Promise<OperationFigures> {
  const figures: OperationFigures = {
    action,
    state: 'running',
    dryRun: false,
    total: selected.length,
    done: 0,
    changed: 0,
    skipped: {},
    error: null,
    startedAt: now(),
    finishedAt: null,
  };
  const skip = (reason: SelectedSkipReason) => {
    figures.skipped = { ...figures.skipped, [reason]: (figures.skipped[reason] ?? 0) + 1 };
  };
  onProgress({ ...figures });
  for (const webhook of selected) {
    if (!actionAvailability(action, webhook.state).allowed) {
      skip(action === 'retry' ? 'not-failed' : 'final');
    } else {
      try {
        await perform(webhook.id);
        figures.changed++;
      } catch (error) {
        if (error instanceof ApiError && error.status === 409) skip('refused');
        else {
          figures.state = 'failed';
          figures.error = `Webhook ${webhook.id}: ${errorMessage(error)}`;
          figures.finishedAt = now();
          onProgress({ ...figures });
          return figures;
        }
      }
    }
    figures.done++;
    onProgress({ ...figures });
  }
  figures.state = 'done';
  figures.finishedAt = now();
  onProgress({ ...figures });
  return { ...figures };
}
