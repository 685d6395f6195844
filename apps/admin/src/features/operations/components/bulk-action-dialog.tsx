import type { BulkWebhookAction, WebhookBulkFilter } from '@platform/shared';
import { useEffect, useRef, useState, type RefObject } from 'react';
import { Button } from '../../../components/ui/button';
import { Modal } from '../../../components/ui/dialog';
import { ErrorState, Loading } from '../../../components/ui/feedback';
import { formatCount } from '../../../lib/format';
import { useOperation } from '../api/get-operation';
import { startBulk, useStartOperation } from '../api/start-operation';
import { OperationProgress } from './operation-progress';
import { skippedText, skippedTotal } from '../utils/operation-progress';

/** What a bulk action by filter is asked for: the action, the filter, and its wording. */
export interface BulkRequest {
  action: BulkWebhookAction;
  filter: WebhookBulkFilter;
  /** What the filter selects, in words (`state Failed, registration 3`). */
  description: string;
  /** The dialog's title; by default `Retry every webhook matching the filters?`. */
  title?: string;
  /** Changes with each opening, so every opening counts afresh. */
  seq: number;
}

export const BULK_ACTION_COPY: Readonly<
  Record<BulkWebhookAction, { button: string; title: string; verb: string; explanation: string }>
> = {
  retry: {
    button: 'Retry all matching…',
    title: 'Retry every webhook matching the filters?',
    verb: 'Retry',
    explanation:
      'Each Failed one becomes Retrying and is due at once for one more attempt (or, with a fresh schedule, all 7 attempts again); its group is held until it ends. Others are skipped.',
  },
  abort: {
    button: 'Abort all matching…',
    title: 'Abort every webhook matching the filters?',
    verb: 'Abort',
    explanation:
      'Each one not yet final will never be delivered; a group it holds moves on to its next webhook. This cannot be undone.',
  },
  resolve: {
    button: 'Resolve all matching…',
    title: 'Resolve every webhook matching the filters?',
    verb: 'Resolve',
    explanation:
      'Each one not yet final is marked handled and not delivered; a group it holds moves on to its next webhook.',
  },
};

/**
 * Shared by the webhooks table ("act on everything matching this filter") and the blocked groups
 * (every blocker of a registration). The steps of a bulk action by filter: a dry run counts what it would change (shown with its
 * skip reasons), the operator confirms, then the operation runs and its progress is followed
 * until done. `onStarted` hands the real operation to the page, which keeps showing it after
 * the dialog closes.
 */
function BulkActionSteps({
  request,
  onClose,
  onStarted,
  cancelRef,
}: {
  request: BulkRequest;
  onClose: () => void;
  onStarted: (operationId: number) => void;
  cancelRef: RefObject<HTMLButtonElement | null>;
}) {
  const copy = BULK_ACTION_COPY[request.action];
  const dryStart = useStartOperation(startBulk);
  const realStart = useStartOperation(startBulk);
  const [freshSchedule, setFreshSchedule] = useState(false);
  const dryRun = useOperation(dryStart.data?.id);
  const real = useOperation(realStart.data?.id);
  const started = useRef(false);

  useEffect(() => {
    // once per opening (StrictMode runs effects twice in development)
    if (started.current) return;
    started.current = true;
    dryStart.mutate({ action: request.action, filter: request.filter, dryRun: true });
  }, [dryStart, request]);

  const counted = dryRun.data && dryRun.data.state !== 'running' ? dryRun.data : undefined;
  const confirm = async () => {
    const operation = await realStart.mutateAsync({
      action: request.action,
      filter: request.filter,
      ...(request.action === 'retry' && freshSchedule ? { freshSchedule: true } : {}),
    });
    onStarted(operation.id);
  };

  const phase = realStart.data ? 'running' : 'counting';
  const running = real.data?.state === 'running';
  return (
    <>
      <p>
        Filter: <strong>{request.description}</strong>. Every match counts, not only those on the screen.
      </p>
      <p>{copy.explanation}</p>

      {phase === 'counting' && (
        <section aria-label="Dry run" className="bulk-step">
          {dryStart.isError ? (
            <ErrorState title="The dry run could not start" error={dryStart.error} />
          ) : !dryRun.data ? (
            <Loading label="Counting what would change (dry run)…" />
          ) : (
            <OperationProgress operation={dryRun.data} label="Dry run: what would change" />
          )}
          {counted?.state === 'done' && (
            <p className="bulk-count" data-testid="bulk-dry-run-count" role="status">
              {formatCount(counted.total)} selected, {formatCount(counted.changed)} would change,{' '}
              {formatCount(skippedTotal(counted.skipped))} skipped
              {skippedTotal(counted.skipped) ? ` (${skippedText(counted.skipped)})` : ''}.
            </p>
          )}
          {request.action === 'retry' && (
            <label className="checkbox">
              <input
                type="checkbox"
                checked={freshSchedule}
                onChange={(event) => setFreshSchedule(event.target.checked)}
                name="freshSchedule"
              />
              Fresh schedule: start all 7 attempts again (otherwise one more attempt)
            </label>
          )}
          {realStart.isError && <ErrorState title="It could not start" error={realStart.error} />}
        </section>
      )}

      {phase === 'running' && (
        <section aria-label="Progress" className="bulk-step">
          {real.data ? (
            <OperationProgress operation={real.data} label={`${copy.verb} of ${request.description}`} />
          ) : (
            <Loading label="Starting…" />
          )}
          {running && (
            <p className="muted small">
              It runs on the server: closing this leaves it running, and the page keeps showing it.
            </p>
          )}
        </section>
      )}

      <div className="dialog__actions">
        <Button ref={cancelRef} onClick={onClose} disabled={realStart.isPending}>
          {phase === 'running' ? 'Close' : 'Cancel'}
        </Button>
        {phase === 'counting' && (
          <Button
            variant={request.action === 'retry' ? 'primary' : 'danger'}
            onClick={() => void confirm().catch(() => {})}
            busy={realStart.isPending}
            disabled={counted?.state !== 'done' || counted.changed === 0}
          >
            {counted?.state === 'done'
              ? `${copy.verb} ${formatCount(counted.changed)} webhook${counted.changed === 1 ? '' : 's'}`
              : copy.verb}
          </Button>
        )}
      </div>
    </>
  );
}

/** "Act on everything matching this filter": dry run, confirmation, progress (see `BulkActionSteps`). */
export function BulkActionDialog({
  request,
  onClose,
  onStarted,
}: {
  request: BulkRequest | null;
  onClose: () => void;
  onStarted: (operationId: number) => void;
}) {
  const cancelRef = useRef<HTMLButtonElement>(null);
  return (
    <Modal
      open={request !== null}
      title={request ? (request.title ?? BULK_ACTION_COPY[request.action].title) : ''}
      onCancel={onClose}
      initialFocus={cancelRef}
      testId="bulk-action-dialog"
    >
      {request && (
        <BulkActionSteps
          key={request.seq}
          request={request}
          onClose={onClose}
          onStarted={onStarted}
          cancelRef={cancelRef}
        />
      )}
    </Modal>
  );
}
