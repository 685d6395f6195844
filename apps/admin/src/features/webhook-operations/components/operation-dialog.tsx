import type { WebhookOperationRead } from '@platform/shared';
import { useEffect, useRef, useState, type ReactNode, type RefObject } from 'react';
import { Button, type ButtonVariant } from '../../../components/ui/button';
import { Modal } from '../../../components/ui/dialog';
import { ErrorState, Loading } from '../../../components/ui/feedback';
import { errorMessage } from '../../../lib/api-client';
import { formatCount } from '../../../lib/format';
import { useOperation } from '../api/get-webhook-operation';
import { useStartOperation } from '../api/start-webhook-operation';
import { OperationProgress } from './operation-progress';

/** The request an operation dialog would send, or why it cannot (shown instead of counting). */
export type OperationDialogRequest<Request> = { request: Request; problem?: undefined } | { problem: string };

interface OperationDialogProps<Request> {
  open: boolean;
  title: string;
  /** What the operation does, and the fields that shape its request (the window, …). */
  children: ReactNode;
  /** The request of the fields as they are now; a change discards the count taken for the last one. */
  request: OperationDialogRequest<Request>;
  /**
   * Starts the operation: a dry run first (`dryRun: true`), then, once confirmed, the real one.
   * Choices that shape only the real run (`runOptions`) are added here when `dryRun` is false. The
   * real run carries the dry run's id (`fromDryRun`): it acts on exactly the rows that were counted.
   */
  start: (request: Request, dryRun: boolean, fromDryRun?: number) => Promise<WebhookOperationRead>;
  /**
   * Count as soon as it opens, and show the dry run's progress while it counts: for a request
   * with nothing to fill in (a bulk action by a fixed filter). Otherwise the operator fills in
   * the fields and presses "Count what would change".
   */
  countAtOnce?: boolean;
  /** The count a finished dry run tells: `12 Failed webhooks would be delivered again.` */
  countText: (dryRun: WebhookOperationRead) => string;
  /** Choices under the count that shape only the real run, not what is counted (fresh schedule). */
  runOptions?: ReactNode;
  /** The confirm button once counted: `Recover 12 webhooks`. */
  confirmLabel: (dryRun: WebhookOperationRead) => string;
  confirmVariant?: ButtonVariant;
  /** What the progress bar is of, for screen readers. */
  progressLabel: string;
  /** The real operation started: a page that keeps showing it after the dialog closes takes its id. */
  onStarted?: (operationId: number) => void;
  onClose: () => void;
  testId?: string;
}

/**
 * The one flow of every operation the console starts (a bulk action by filter, a recover, a
 * replay): count what it would change (a dry run, which changes nothing; changing a field
 * discards the count), confirm what was counted, then follow the real operation until it is done.
 * Closing it while the operation runs leaves the operation running (it is the API's, not the
 * page's); the page that started it keeps showing it (`onStarted`), or the audit page links to it.
 */
export function OperationDialog<Request>(props: OperationDialogProps<Request>) {
  const cancelRef = useRef<HTMLButtonElement>(null);
  return (
    <Modal
      open={props.open}
      title={props.title}
      onCancel={props.onClose}
      initialFocus={cancelRef}
      testId={props.testId}
    >
      {/* mounted per opening, so every opening counts afresh */}
      {props.open && <OperationSteps {...props} cancelRef={cancelRef} />}
    </Modal>
  );
}

function OperationSteps<Request>({
  children,
  request,
  start,
  countAtOnce = false,
  countText,
  runOptions,
  confirmLabel,
  confirmVariant = 'primary',
  progressLabel,
  onStarted,
  onClose,
  cancelRef,
}: OperationDialogProps<Request> & { cancelRef: RefObject<HTMLButtonElement | null> }) {
  const startDryRun = useStartOperation(({ request }: { request: Request }) => start(request, true));
  const startRun = useStartOperation(({ request, fromDryRun }: { request: Request; fromDryRun: number }) =>
    start(request, false, fromDryRun),
  );
  const [counted, setCounted] = useState<{ id: number; key: string } | undefined>(undefined);
  const progressRef = useRef<HTMLElement>(null);

  const key = request.problem === undefined ? JSON.stringify(request.request) : '';
  const dryRunId = counted && counted.key === key ? counted.id : undefined;
  const dryRun = useOperation(dryRunId);
  const run = useOperation(startRun.data?.id);

  const countDone = dryRun.data?.state === 'done' ? dryRun.data : undefined;
  const count = () => {
    if (request.problem !== undefined) return;
    startDryRun.mutate(
      { request: request.request },
      { onSuccess: (operation) => setCounted({ id: operation.id, key }) },
    );
  };
  const confirm = () => {
    if (request.problem !== undefined || countDone === undefined) return;
    startRun.mutate(
      { request: request.request, fromDryRun: countDone.id },
      { onSuccess: (operation) => onStarted?.(operation.id) },
    );
  };

  // once per opening (StrictMode runs effects twice in development)
  const countedAtOnce = useRef(false);
  useEffect(() => {
    if (!countAtOnce || countedAtOnce.current) return;
    countedAtOnce.current = true;
    count();
  });

  // the confirm button goes away once the operation runs: focus follows the progress
  const running = startRun.data !== undefined;
  useEffect(() => {
    if (running) progressRef.current?.focus();
  }, [running]);

  const counting = startDryRun.isPending || dryRun.data?.state === 'running';
  // counted at once, the dry run's progress shows above the count (its failure too)
  const dryRunShown = countAtOnce && dryRun.data !== undefined;

  return (
    <>
      {!running ? (
        <section aria-label="What it does" className="operation-step">
          <fieldset className="operation-dialog__fields" disabled={startRun.isPending}>
            {children}
          </fieldset>
          {dryRunShown && <OperationProgress operation={dryRun.data!} label="Dry run: what would change" />}
          <div aria-live="polite" data-testid="operation-count">
            {request.problem !== undefined ? (
              <p className="field__error">{request.problem}</p>
            ) : startDryRun.isError ? (
              <ErrorState title="The dry run could not start" error={startDryRun.error} />
            ) : dryRun.data?.state === 'failed' && !dryRunShown ? (
              <OperationProgress operation={dryRun.data} label="Dry run: what would change" />
            ) : countDone ? (
              <p className="operation-dialog__count">
                <strong>{countText(countDone)}</strong>
              </p>
            ) : counting ? (
              !dryRunShown && <Loading label="Counting what would change (a dry run: nothing changes)…" />
            ) : (
              !countAtOnce && (
                <p className="muted">
                  Count first: a dry run says how many would change, and changes nothing.
                </p>
              )
            )}
          </div>
          {countDone && request.problem === undefined && (
            <p className="muted small" data-testid="operation-exact-note">
              Confirming acts on exactly the {formatCount(countDone.total)} counted now (the dry run’s
              selection), not on what matches later; any whose state moves on meanwhile is skipped.
            </p>
          )}
          {runOptions && (
            <fieldset className="operation-dialog__fields" disabled={startRun.isPending}>
              {runOptions}
            </fieldset>
          )}
          {startRun.isError && (
            <p className="form-error" role="alert">
              It was not started: {errorMessage(startRun.error)}
            </p>
          )}
        </section>
      ) : (
        <section ref={progressRef} tabIndex={-1} aria-label="Progress" className="operation-step">
          {run.data ? (
            <OperationProgress operation={run.data} label={progressLabel} />
          ) : (
            <Loading label="Starting…" />
          )}
          {run.data?.state === 'running' && (
            <p className="muted small">
              {onStarted
                ? 'It runs on the server: closing this leaves it running, and the page keeps showing it.'
                : 'It runs on the server: closing this leaves it running (the audit page links to it).'}
            </p>
          )}
        </section>
      )}
      <div className="dialog__actions">
        <Button ref={cancelRef} onClick={onClose} disabled={startRun.isPending}>
          {running ? 'Close' : 'Cancel'}
        </Button>
        {!running &&
          (countDone ? (
            <Button
              variant={confirmVariant}
              onClick={confirm}
              busy={startRun.isPending}
              disabled={countDone.changed === 0}
            >
              {confirmLabel(countDone)}
            </Button>
          ) : (
            <Button onClick={count} busy={counting} disabled={request.problem !== undefined}>
              Count what would change
            </Button>
          ))}
      </div>
    </>
  );
}
