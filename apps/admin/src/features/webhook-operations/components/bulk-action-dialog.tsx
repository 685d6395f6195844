import type { BulkWebhookAction, WebhookBulkFilter, WebhookBulkRequest } from '@platform/shared';
import { useState, type ReactNode } from 'react';
import { Button } from '../../../components/ui/button';
import { formatCount } from '../../../lib/format';
import { startBulk } from '../api/start-webhook-operation';
import { dryRunCountText } from '../utils/operation-progress';
import { OperationDialog } from './operation-dialog';

/** What a bulk action by filter is asked for: the action, the filter, and its wording. */
export interface BulkRequest {
  action: BulkWebhookAction;
  filter: WebhookBulkFilter;
  /** What the filter selects, in words (`state Failed, registration 3`). */
  description: string;
  /** The dialog's title; by default `Retry every webhook matching the filters?`. */
  title?: string;
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
 * "Act on everything matching this filter", for the webhooks table, the blocked groups (every
 * blocker of a registration) and triage (a line): the `OperationDialog` flow with nothing to
 * fill in, so it counts at once (a dry run, shown with its skip reasons); retry offers a fresh
 * schedule, which shapes only the real run. `onStarted` hands the real operation to the page,
 * which keeps showing it after the dialog closes.
 */
export function BulkActionDialog({
  request,
  onClose,
  onStarted,
}: {
  request: BulkRequest | null;
  onClose: () => void;
  onStarted: (operationId: number) => void;
}) {
  const [freshSchedule, setFreshSchedule] = useState(false);
  const action = request?.action ?? 'retry';
  const copy = BULK_ACTION_COPY[action];
  const close = () => {
    setFreshSchedule(false);
    onClose();
  };
  return (
    <OperationDialog<WebhookBulkRequest>
      open={request !== null}
      title={request ? (request.title ?? copy.title) : ''}
      request={request ? { request: { action, filter: request.filter } } : { problem: 'Nothing asked.' }}
      start={(bulk, dryRun, fromDryRun) =>
        startBulk(
          dryRun
            ? { ...bulk, dryRun }
            : { ...bulk, fromDryRun, ...(action === 'retry' && freshSchedule ? { freshSchedule } : {}) },
        )
      }
      countAtOnce
      countText={dryRunCountText}
      runOptions={
        action === 'retry' && (
          <label className="checkbox">
            <input
              type="checkbox"
              checked={freshSchedule}
              onChange={(event) => setFreshSchedule(event.target.checked)}
              name="freshSchedule"
            />
            Fresh schedule: start all 7 attempts again (otherwise one more attempt)
          </label>
        )
      }
      confirmLabel={(dryRun) =>
        `${copy.verb} ${formatCount(dryRun.changed)} webhook${dryRun.changed === 1 ? '' : 's'}`
      }
      confirmVariant={action === 'retry' ? 'primary' : 'danger'}
      progressLabel={request ? `${copy.verb} of ${request.description}` : ''}
      onStarted={onStarted}
      onClose={close}
      testId="bulk-action-dialog"
    >
      <p>
        Filter: <strong>{request?.description}</strong>. Every match counts, not only those on the screen.
      </p>
      <p>{copy.explanation}</p>
    </OperationDialog>
  );
}

/**
 * A row of bulk action buttons over a whole selection ("All 28 matching the filters, every
 * page:"), each opening the `BulkActionDialog`; retry is the primary one. Without the permission
 * they are disabled and point at the notice that says why (`describedBy`).
 */
export function BulkActionButtons({
  label,
  what,
  actions,
  mayUpdate,
  describedBy,
  buttonLabel,
  onAct,
}: {
  /** The group's accessible name: `Every webhook matching the filters`. */
  label: string;
  /** What they act on, in words, before the buttons. */
  what: ReactNode;
  actions: readonly BulkWebhookAction[];
  mayUpdate: boolean;
  describedBy?: string;
  buttonLabel: (action: BulkWebhookAction) => string;
  onAct: (action: BulkWebhookAction) => void;
}) {
  return (
    <div className="bulk-bar__row" role="group" aria-label={label}>
      <span className="bulk-bar__what">{what}</span>
      {actions.map((action) => (
        <Button
          key={action}
          size="small"
          variant={action === 'retry' ? 'primary' : 'secondary'}
          disabled={!mayUpdate}
          aria-describedby={describedBy}
          onClick={() => onAct(action)}
        >
          {buttonLabel(action)}
        </Button>
      ))}
    </div>
  );
}
