import { Button } from '../../../components/ui/button';
import type { OperationFigures } from '../utils/operation-progress';
import { FollowOperation, OperationProgress } from './operation-progress';

/**
 * What a page keeps showing of the work it started, each with a Dismiss button: the last run of
 * single actions on selected rows (dismissable once it ended) and the operation a bulk dialog
 * started (followed until done; dismissing it leaves it running). Nothing when there is neither.
 */
export function OperationsPanel({
  label = 'Actions in progress and done',
  selectedRun = null,
  selectedRunLabel,
  onDismissSelected,
  operationId,
  onDismissOperation,
}: {
  /** The section's accessible name. */
  label?: string;
  selectedRun?: OperationFigures | null;
  /** What the selected run's bar is of: `Retry of 3 selected`. */
  selectedRunLabel?: string;
  onDismissSelected?: () => void;
  operationId: number | null;
  onDismissOperation: () => void;
}) {
  if (!selectedRun && operationId === null) return null;
  return (
    <section className="section operations" aria-label={label}>
      {selectedRun && (
        <div className="operations__item">
          <OperationProgress operation={selectedRun} label={selectedRunLabel} />
          {selectedRun.state !== 'running' && (
            <Button size="small" variant="ghost" onClick={onDismissSelected}>
              Dismiss
            </Button>
          )}
        </div>
      )}
      {operationId !== null && (
        <div className="operations__item">
          <FollowOperation id={operationId} />
          <Button size="small" variant="ghost" onClick={onDismissOperation}>
            Dismiss
          </Button>
        </div>
      )}
    </section>
  );
}
