import type { WebhookOperationRead, WebhookWindowRequest } from '@platform/shared';
import { useState } from 'react';
import { Button } from '../../../components/ui/button';
import { Field } from '../../../components/ui/field';
import { formatCount } from '../../../lib/format';
import { OperationDialog } from '../../webhook-operations/components/operation-dialog';
import {
  startWindowOperation,
  type WindowOperation,
} from '../../webhook-operations/api/start-webhook-operation';
import {
  fieldsOfPick,
  localTimeZone,
  windowPicks,
  windowRequest,
  type WindowFields,
} from '../utils/recovery-window';

const plural = (count: number, one: string, many: string) =>
  `${formatCount(count)} ${count === 1 ? one : many}`;

/** The words of each window operation: what it does, what its count means, its confirm button. */
export const WINDOW_OPERATION_COPY: Readonly<
  Record<
    WindowOperation,
    {
      label: string;
      title: (id: number) => string;
      explanation: string;
      countText: (dryRun: WebhookOperationRead) => string;
      confirmLabel: (dryRun: WebhookOperationRead) => string;
    }
  >
> = {
  recover: {
    label: 'Recover failed webhooks…',
    title: (id) => `Recover the failed webhooks of registration ${id}`,
    explanation:
      'Every Failed webhook of this registration created in the window goes back to delivery with a fresh schedule (all 7 attempts again), each group in its original order and ahead of the group’s later webhooks. The target’s circuit breaker is half-opened, so delivery starts at once.',
    countText: (dryRun) =>
      dryRun.changed === 0
        ? 'No Failed webhook in this window: nothing to recover.'
        : `${plural(dryRun.changed, 'Failed webhook', 'Failed webhooks')} would be delivered again.`,
    confirmLabel: (dryRun) => `Recover ${plural(dryRun.changed, 'webhook', 'webhooks')}`,
  },
  replay: {
    label: 'Replay changes…',
    title: (id) => `Replay the changes of a window to registration ${id}`,
    explanation:
      'New webhooks are written for every change in the window that this registration would have received (its events), with the body as it was then, in the original order and grouped as the registration groups. For a receiver that lost its data: it gets those changes again, also the ones it already has. Existing webhooks are left as they are.',
    countText: (dryRun) =>
      dryRun.changed === 0
        ? 'No change in this window that this registration receives: nothing to replay.'
        : `${plural(dryRun.total, 'change', 'changes')} in the window: ${plural(dryRun.changed, 'new webhook', 'new webhooks')} would be written.`,
    confirmLabel: (dryRun) => `Write ${plural(dryRun.changed, 'webhook', 'webhooks')}`,
  },
};

/**
 * Recover or replay a window of a registration: pick the window (quick picks fill both fields),
 * count with a dry run, confirm, then follow the operation.
 */
export function WindowOperationDialog({
  registrationId,
  kind,
  open,
  failingSince,
  onClose,
}: {
  registrationId: number;
  kind: WindowOperation;
  open: boolean;
  /** Where the registration's failing run started (its health), for the "since it started failing" pick. */
  failingSince: string | null | undefined;
  onClose: () => void;
}) {
  const copy = WINDOW_OPERATION_COPY[kind];
  const [fields, setFields] = useState<WindowFields>({ since: '', until: '' });
  const now = Date.now();
  const picks = windowPicks(now, failingSince);
  const request = windowRequest(fields, now);
  const close = () => {
    setFields({ since: '', until: '' });
    onClose();
  };

  return (
    <OperationDialog<WebhookWindowRequest>
      open={open}
      title={copy.title(registrationId)}
      request={request}
      start={(window, dryRun, fromDryRun) =>
        startWindowOperation(registrationId, kind, { ...window, dryRun, fromDryRun })
      }
      countText={copy.countText}
      confirmLabel={copy.confirmLabel}
      progressLabel={`${kind === 'recover' ? 'Recover' : 'Replay'} of registration ${registrationId}`}
      onClose={close}
    >
      <p>{copy.explanation}</p>
      <div className="filters__quick" role="group" aria-label="Quick windows">
        {picks.map((pick) => (
          <Button key={pick.id} size="small" onClick={() => setFields(fieldsOfPick(pick))}>
            {pick.label}
          </Button>
        ))}
      </div>
      <div className="form__row">
        <Field label="Created from" hint={`In your time zone, ${localTimeZone()}.`}>
          <input
            type="datetime-local"
            value={fields.since}
            onChange={(e) => setFields({ ...fields, since: e.target.value })}
          />
        </Field>
        <Field label="Created before" hint="Empty: until now.">
          <input
            type="datetime-local"
            value={fields.until}
            onChange={(e) => setFields({ ...fields, until: e.target.value })}
          />
        </Field>
      </div>
    </OperationDialog>
  );
}
