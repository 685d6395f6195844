import type { WebhookOperationAction, WebhookOperationRead } from '@platform/shared';
import { formatCount } from '../../../lib/format';

/**
 * What a progress display needs of an operation: a `WebhookOperationRead`, or the same figures
 * of work the console runs itself (single actions on selected rows, which have no id).
 */
export type OperationFigures = Pick<
  WebhookOperationRead,
  | 'action'
  | 'state'
  | 'dryRun'
  | 'total'
  | 'done'
  | 'changed'
  | 'skipped'
  | 'error'
  | 'startedAt'
  | 'finishedAt'
> & { id?: number };

/** Why a selected webhook was left unchanged, for people (the keys of an operation's `skipped`). */
export const SKIP_REASON_LABELS: Readonly<Record<string, string>> = {
  final: 'already final (Successful, Aborted or Resolved)',
  'not-failed': 'not Failed (nothing to retry)',
  'registration-deleted': 'registration deleted',
  'not-subscribed': 'not subscribed by the registration',
  refused: 'refused by the API (its state moved on)',
};

export function skipReasonLabel(reason: string): string {
  return SKIP_REASON_LABELS[reason] ?? reason;
}

/** The skip reasons with a count, largest first: `[['final', 12], …]`. */
export function skippedEntries(skipped: Readonly<Record<string, number>>): [string, number][] {
  return Object.entries(skipped)
    .filter(([, count]) => count > 0)
    .sort((a, b) => b[1] - a[1] || a[0].localeCompare(b[0]));
}

export function skippedTotal(skipped: Readonly<Record<string, number>>): number {
  return Object.values(skipped).reduce((sum, count) => sum + count, 0);
}

/** `12 final, 3 not-failed` in words: `12 already final (…), 3 not Failed (…)`; empty for none. */
export function skippedText(skipped: Readonly<Record<string, number>>): string {
  return skippedEntries(skipped)
    .map(([reason, count]) => `${formatCount(count)} ${skipReasonLabel(reason)}`)
    .join(', ');
}

/**
 * What a finished dry run of a bulk action counted: `120 selected, 100 would change, 20 skipped
 * (20 not Failed (nothing to retry)).`
 */
export function dryRunCountText(dryRun: Pick<WebhookOperationRead, 'total' | 'changed' | 'skipped'>): string {
  const skipped = skippedTotal(dryRun.skipped);
  return `${formatCount(dryRun.total)} selected, ${formatCount(dryRun.changed)} would change, ${formatCount(skipped)} skipped${
    skipped ? ` (${skippedText(dryRun.skipped)})` : ''
  }.`;
}

/** How far it got, 0–100 (whole); a finished operation with nothing selected is 100. */
export function progressPercent(operation: Pick<WebhookOperationRead, 'done' | 'total' | 'state'>): number {
  if (operation.total <= 0) return operation.state === 'running' ? 0 : 100;
  return Math.min(100, Math.floor((operation.done / operation.total) * 100));
}

/** What an operation does to what it changes, past tense: `retried`, `aborted`, … */
const ACTION_DONE: Readonly<Record<WebhookOperationAction, string>> = {
  retry: 'retried',
  abort: 'aborted',
  resolve: 'resolved',
  recover: 'recovered',
  replay: 'written',
};

/** The noun of what an operation selects: entity changes for a replay, webhooks otherwise. */
export function selectedNoun(action: WebhookOperationAction, count: number): string {
  if (action === 'replay') return count === 1 ? 'entity change' : 'entity changes';
  return count === 1 ? 'webhook' : 'webhooks';
}

/** `100 retried`, `100 would be retried`; a replay counts the webhooks it writes. */
export function changedText(operation: Pick<WebhookOperationRead, 'action' | 'changed' | 'dryRun'>): string {
  const count = formatCount(operation.changed);
  const verb = ACTION_DONE[operation.action];
  const what = operation.action === 'replay' ? ` ${operation.changed === 1 ? 'webhook' : 'webhooks'}` : '';
  return operation.dryRun ? `${count}${what} would be ${verb}` : `${count}${what} ${verb}`;
}

export const OPERATION_STATE_LABELS: Readonly<Record<WebhookOperationRead['state'], string>> = {
  running: 'Running',
  done: 'Done',
  failed: 'Failed',
};

/**
 * The one-sentence outcome of an operation: for a dry run `120 webhooks selected: 100 would be
 * retried, 20 skipped (20 not Failed …)`; for a finished one `Done: 120 webhooks selected, 100
 * retried, …`; a running one how far it got; a failed one how far it got and why it stopped.
 */
export function operationSummary(operation: OperationFigures): string {
  const { action, total, done, skipped } = operation;
  const noun = selectedNoun(action, total);
  const skippedCount = skippedTotal(skipped);
  const skippedPart = skippedCount ? `, ${formatCount(skippedCount)} skipped (${skippedText(skipped)})` : '';
  const changed = changedText(operation);
  switch (operation.state) {
    case 'running':
      return `Running: ${formatCount(done)} of ${formatCount(total)} ${noun} processed, ${changed}${skippedPart}.`;
    case 'failed':
      return `Failed after ${formatCount(done)} of ${formatCount(total)} ${noun}: ${changed}${skippedPart}.${
        operation.error ? ` ${operation.error}` : ''
      }`;
    default:
      return operation.dryRun
        ? `${formatCount(total)} ${noun} selected: ${changed}${skippedPart}.`
        : `Done: ${formatCount(total)} ${noun} selected, ${changed}${skippedPart}.`;
  }
}
