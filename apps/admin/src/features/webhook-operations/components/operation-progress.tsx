import { useId } from 'react';
import { DateTime } from '../../../components/ui/date-time';
import { ErrorState, Loading } from '../../../components/ui/feedback';
import { formatCount } from '../../../lib/format';
import { useOperation } from '../api/get-webhook-operation';
import {
  changedText,
  OPERATION_STATE_LABELS,
  operationSummary,
  progressPercent,
  type OperationFigures,
  selectedNoun,
  skippedEntries,
  skipReasonLabel,
} from '../utils/operation-progress';

/**
 * How far an operation got: a progress bar (`role="progressbar"`, done of total), what changed,
 * what was skipped and why, its state, the error of a failed one, and once it is finished a
 * one-sentence summary in a polite live region (announced once, not at every poll).
 */
export function OperationProgress({
  operation,
  label,
}: {
  operation: OperationFigures;
  /** What the bar is of, for screen readers: `Retry of 120 webhooks`. Defaults to the action. */
  label?: string;
}) {
  const labelId = useId();
  const percent = progressPercent(operation);
  const running = operation.state === 'running';
  const noun = selectedNoun(operation.action, operation.total);
  const skipped = skippedEntries(operation.skipped);
  return (
    <div
      className={`operation operation--${operation.state}`}
      data-testid="operation-progress"
      data-state={operation.state}
    >
      <div className="operation__head">
        <span id={labelId} className="operation__label">
          {label ??
            `${operation.id ? `Operation ${operation.id}: ` : ''}${operation.action}${operation.dryRun ? ' (dry run)' : ''}`}
        </span>
        <span className={`badge badge--operation-${operation.state}`} data-testid="operation-state">
          {OPERATION_STATE_LABELS[operation.state]}
        </span>
      </div>
      <div
        className="progress"
        role="progressbar"
        aria-labelledby={labelId}
        aria-valuemin={0}
        aria-valuemax={operation.total}
        aria-valuenow={operation.done}
        aria-valuetext={`${formatCount(operation.done)} of ${formatCount(operation.total)} ${noun} (${percent} %)`}
      >
        <div className="progress__bar" style={{ width: `${percent}%` }} />
      </div>
      <dl className="operation__figures">
        <div>
          <dt>Processed</dt>
          <dd data-testid="operation-done">
            {formatCount(operation.done)} of {formatCount(operation.total)} {noun}
          </dd>
        </div>
        <div>
          <dt>{operation.dryRun ? 'Would change' : 'Changed'}</dt>
          <dd data-testid="operation-changed">{changedText(operation)}</dd>
        </div>
        <div>
          <dt>Skipped</dt>
          <dd data-testid="operation-skipped">
            {skipped.length === 0 ? (
              'None'
            ) : (
              <ul className="operation__skipped">
                {skipped.map(([reason, count]) => (
                  <li key={reason}>
                    {formatCount(count)} {skipReasonLabel(reason)}
                  </li>
                ))}
              </ul>
            )}
          </dd>
        </div>
        <div>
          <dt>{running ? 'Started' : 'Finished'}</dt>
          <dd>
            <DateTime value={running ? operation.startedAt : operation.finishedAt} />
          </dd>
        </div>
      </dl>
      {operation.state === 'failed' && (
        <p className="operation__error" role="alert" data-testid="operation-error">
          It stopped: {operation.error ?? 'no reason was given'}. Webhooks it reached are changed, the rest
          are not; running it again is safe.
        </p>
      )}
      {/* always present, filled when finished, so screen readers announce the outcome once */}
      <p className="operation__summary" aria-live="polite" data-testid="operation-summary">
        {running ? '' : operationSummary(operation)}
      </p>
    </div>
  );
}

/** Reads operation `id` and shows its progress until it is done or failed (see `useOperation`). */
export function FollowOperation({ id, label }: { id: number; label?: string }) {
  const operation = useOperation(id);
  if (operation.isPending) return <Loading label="Reading the operation…" />;
  if (operation.isError && !operation.data) {
    return <ErrorState error={operation.error} onRetry={() => operation.refetch()} />;
  }
  return (
    <>
      {operation.isError && (
        <p className="notice notice--warn" role="status">
          Its progress could not be read just now; trying again.
        </p>
      )}
      <OperationProgress operation={operation.data!} label={label} />
    </>
  );
}
