import type { WebhookOperationRead } from '@platform/shared';
import { useEffect, useRef, useState, type ReactNode } from 'react';
import type { ButtonVariant } from '../../../components/ui/button';
import { ConfirmDialog } from '../../../components/ui/dialog';
import { ErrorState } from '../../../components/ui/feedback';
import { useToast } from '../../../components/ui/toast';
import { errorMessage } from '../../../lib/api-client';
import { useOperation } from '../api/get-operation';
import { useStartOperation } from '../api/start-operation';
import { FollowOperation, OperationProgress } from './operation-progress';

/** The request an operation dialog would send, or why it cannot (shown instead of counting). */
export type OperationDialogRequest<Request> = { request: Request; problem?: undefined } | { problem: string };

interface OperationDialogProps<Request> {
  open: boolean;
  title: string;
  /** What the operation does, and the fields that shape its request (the window, …). */
  children: ReactNode;
  /** The request of the fields as they are now; a change discards the count taken for the last one. */
  request: OperationDialogRequest<Request>;
  /** Starts the operation: a dry run first (`dryRun: true`), then, once confirmed, the real one. */
  start: (request: Request, dryRun: boolean) => Promise<WebhookOperationRead>;
  /** The count a finished dry run tells: `12 Failed webhooks would be delivered again.` */
  countText: (dryRun: WebhookOperationRead) => string;
  /** The confirm button once counted: `Recover 12 webhooks`. */
  confirmLabel: (dryRun: WebhookOperationRead) => string;
  confirmVariant?: ButtonVariant;
  /** What the progress bar is of, for screen readers. */
  progressLabel: string;
  onClose: () => void;
}

/**
 * The dialog of every operation an operator starts (a bulk action, a recover, a replay): count
 * first (a dry run, which changes nothing), then confirm what was counted, then follow the real
 * operation's progress until it is done. Closing it while the operation runs leaves the operation
 * running (it is the API's, not the page's); the audit page lists it.
 */
export function OperationDialog<Request>({
  open,
  title,
  children,
  request,
  start,
  countText,
  confirmLabel,
  confirmVariant = 'primary',
  progressLabel,
  onClose,
}: OperationDialogProps<Request>) {
  const toast = useToast();
  const startDryRun = useStartOperation(({ request }: { request: Request }) => start(request, true));
  const startRun = useStartOperation(({ request }: { request: Request }) => start(request, false));
  const [counted, setCounted] = useState<{ id: number; key: string } | undefined>(undefined);
  const [runId, setRunId] = useState<number | undefined>(undefined);
  const progressRef = useRef<HTMLDivElement>(null);

  const key = request.problem === undefined ? JSON.stringify(request.request) : '';
  const dryRunId = counted && counted.key === key ? counted.id : undefined;
  const dryRun = useOperation(dryRunId);
  const started = useOperation(runId);

  // a new opening starts afresh (`reset` of a mutation is stable)
  const { reset: resetDryRun } = startDryRun;
  const { reset: resetRun } = startRun;
  useEffect(() => {
    if (!open) {
      setCounted(undefined);
      setRunId(undefined);
      resetDryRun();
      resetRun();
    }
  }, [open, resetDryRun, resetRun]);

  // the confirm button goes away once the operation runs: focus follows the progress
  useEffect(() => {
    if (runId !== undefined) progressRef.current?.focus();
  }, [runId]);

  const count = () => {
    if (request.problem !== undefined) return;
    startDryRun.mutate(
      { request: request.request },
      { onSuccess: (operation) => setCounted({ id: operation.id, key }) },
    );
  };
  const run = () => {
    if (request.problem !== undefined) return;
    startRun.mutate({ request: request.request }, { onSuccess: (operation) => setRunId(operation.id) });
  };
  const close = () => {
    if (runId !== undefined && started.data?.state === 'running') {
      toast.success(`Operation ${runId} goes on in the background; the audit page lists it.`);
    }
    onClose();
  };

  const counting = startDryRun.isPending || dryRun.data?.state === 'running';
  const countDone = dryRun.data?.state === 'done' ? dryRun.data : undefined;

  let confirm: { label?: string; onConfirm?: () => void; disabled?: boolean } = {};
  if (runId === undefined) {
    confirm = countDone
      ? { label: confirmLabel(countDone), onConfirm: run, disabled: countDone.changed === 0 }
      : { label: counting ? 'Counting…' : 'Count what would change', onConfirm: count, disabled: counting };
    if (request.problem !== undefined) confirm.disabled = true;
  }

  return (
    <ConfirmDialog
      open={open}
      title={title}
      confirmLabel={confirm.label}
      confirmDisabled={confirm.disabled}
      confirmVariant={countDone ? confirmVariant : 'secondary'}
      cancelLabel={runId === undefined ? 'Cancel' : 'Close'}
      busy={startRun.isPending}
      onConfirm={confirm.onConfirm}
      onCancel={close}
    >
      {runId === undefined ? (
        <>
          <fieldset className="operation-dialog__fields" disabled={startRun.isPending}>
            {children}
          </fieldset>
          <div aria-live="polite" data-testid="operation-count">
            {request.problem !== undefined ? (
              <p className="field__error">{request.problem}</p>
            ) : startDryRun.isError ? (
              <p className="form-error" role="alert">
                Could not count: {errorMessage(startDryRun.error)}
              </p>
            ) : dryRun.data?.state === 'failed' ? (
              <OperationProgress operation={dryRun.data} label="Count (dry run)" />
            ) : countDone ? (
              <p className="operation-dialog__count">
                <strong>{countText(countDone)}</strong>
              </p>
            ) : counting ? (
              <p className="muted">Counting (a dry run: nothing changes)…</p>
            ) : (
              <p className="muted">Count first: a dry run says how many would change, and changes nothing.</p>
            )}
            {dryRunId !== undefined && dryRun.isError && !dryRun.data && <ErrorState error={dryRun.error} />}
          </div>
          {startRun.isError && (
            <p className="form-error" role="alert">
              It was not started: {errorMessage(startRun.error)}
            </p>
          )}
        </>
      ) : (
        <div ref={progressRef} tabIndex={-1} className="operation-dialog__progress">
          <FollowOperation id={runId} label={progressLabel} />
        </div>
      )}
    </ConfirmDialog>
  );
}
