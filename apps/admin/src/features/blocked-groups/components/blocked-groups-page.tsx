import type { BlockedGroupRead } from '@platform/shared';
import { useState } from 'react';
import { Button } from '../../../components/ui/button';
import { DateTime } from '../../../components/ui/date-time';
import { EmptyState, ErrorState, Loading } from '../../../components/ui/feedback';
import { PageHeader } from '../../../components/ui/page-header';
import { Pagination } from '../../../components/ui/pagination';
import { useWebhookActionConfirmation } from '../../../components/webhook-action-confirmation';
import { formatCount } from '../../../lib/format';
import { groupWebhooksPath } from '../../../lib/group-key';
import { Link } from '../../../lib/router';
import { usePermission } from '../../../lib/use-session';
import { useEndBlocker } from '../api/end-blocker';
import { BLOCKED_GROUPS_REFRESH_MS, useBlockedGroups } from '../api/get-blocked-groups';
import { useGroupWebhooks } from '../api/get-group-webhooks';
import { groupProgress } from '../utils/group-progress';

interface Released {
  registrationId: number;
  groupKey: string;
  blockerWebhookId: number;
  action: 'resolve' | 'abort';
}

/** A released group draining: its webhooks polled until nothing waits or is in delivery. */
function DrainProgress({ released, onDismiss }: { released: Released; onDismiss: () => void }) {
  const webhooks = useGroupWebhooks(released);
  const progress = webhooks.data ? groupProgress(webhooks.data.items, released.blockerWebhookId) : undefined;
  let status: string;
  if (!progress) status = webhooks.isError ? 'Its webhooks could not be read.' : 'Reading its webhooks…';
  else if (progress.newBlockerId !== undefined && progress.inDelivery === 0) {
    status = `Held again: webhook ${progress.newBlockerId} failed.`;
  } else if (progress.drained) status = 'Drained: nothing waits any more.';
  else status = `Draining: ${progress.waiting} waiting, ${progress.inDelivery} in delivery.`;
  return (
    <li className="drain" data-testid="drain-progress">
      <div className="drain__text">
        <strong>
          <code>{released.groupKey}</code>
        </strong>{' '}
        of{' '}
        <Link to={`/registrations/${released.registrationId}`}>registration {released.registrationId}</Link>:
        webhook {released.blockerWebhookId} {released.action === 'resolve' ? 'resolved' : 'aborted'}.{' '}
        <span data-testid="drain-status">{status}</span>
        {progress && (
          <span className="muted">
            {' '}
            {formatCount(progress.delivered)} delivered · {formatCount(progress.ended)} ended by operators
          </span>
        )}
      </div>
      <div className="drain__actions">
        <Link to={groupWebhooksPath(released.registrationId, released.groupKey)}>Webhooks of this group</Link>
        <Button
          size="small"
          variant="ghost"
          onClick={onDismiss}
          aria-label={`Stop watching ${released.groupKey}`}
        >
          Dismiss
        </Button>
      </div>
    </li>
  );
}

function GroupRow({
  group,
  mayUpdate,
  onEnd,
}: {
  group: BlockedGroupRead;
  mayUpdate: boolean;
  onEnd: (group: BlockedGroupRead, action: 'resolve' | 'abort') => void;
}) {
  return (
    <tr data-testid="blocked-group">
      <th scope="row" data-label="Group">
        <Link to={groupWebhooksPath(group.registrationId, group.groupKey)}>
          <code>{group.groupKey}</code>
        </Link>
      </th>
      <td data-label="Registration">
        <Link
          to={`/registrations/${group.registrationId}`}
          aria-label={`Registration ${group.registrationId}`}
        >
          #{group.registrationId}
        </Link>
      </td>
      <td data-label="Blocker">
        <Link
          to={`/webhooks/${group.blockerWebhookId}`}
          aria-label={`Blocking webhook ${group.blockerWebhookId}`}
        >
          Webhook #{group.blockerWebhookId}
        </Link>
      </td>
      <td data-label="Blocked since">
        <DateTime value={group.blockedSince} relative />
      </td>
      <td data-label="Waiting behind it" data-testid="pending-count">
        {formatCount(group.pendingCount)}
      </td>
      <td data-label="Oldest waiting">
        <DateTime value={group.oldestPendingCreated} />
      </td>
      <td data-label="Actions" className="cell--wide">
        <div className="row-actions">
          <Button
            size="small"
            variant="primary"
            disabled={!mayUpdate}
            onClick={() => onEnd(group, 'resolve')}
            aria-label={`Resolve blocker ${group.blockerWebhookId} of ${group.groupKey}`}
          >
            Resolve blocker
          </Button>
          <Button
            size="small"
            variant="danger"
            disabled={!mayUpdate}
            onClick={() => onEnd(group, 'abort')}
            aria-label={`Abort blocker ${group.blockerWebhookId} of ${group.groupKey}`}
          >
            Abort blocker
          </Button>
        </div>
      </td>
    </tr>
  );
}

/** Groups held by a Failed webhook: unblock them and watch them drain. */
export function BlockedGroupsPage() {
  const [pageNumber, setPageNumber] = useState(1);
  const groups = useBlockedGroups(pageNumber);
  const mayUpdate = usePermission('Webhook.Update');
  const endBlocker = useEndBlocker();
  const [released, setReleased] = useState<Released[]>([]);
  const { ask, dialog } = useWebhookActionConfirmation(async (webhookId, action) => {
    if (action === 'retry') throw new Error('Retry is offered on the webhook’s page.');
    const group = groups.data?.items.find((g) => g.blockerWebhookId === webhookId);
    await endBlocker.mutateAsync({ webhookId, action });
    if (group) {
      setReleased((all) => [
        {
          registrationId: group.registrationId,
          groupKey: group.groupKey,
          blockerWebhookId: webhookId,
          action,
        },
        ...all.filter((r) => !(r.registrationId === group.registrationId && r.groupKey === group.groupKey)),
      ]);
    }
  });
  const onEnd = (group: BlockedGroupRead, action: 'resolve' | 'abort') =>
    ask(
      group.blockerWebhookId,
      action,
      <p>
        It holds group <code>{group.groupKey}</code> of registration {group.registrationId}, with{' '}
        {formatCount(group.pendingCount)} webhook{group.pendingCount === 1 ? '' : 's'} waiting behind it.
      </p>,
    );

  return (
    <>
      <PageHeader
        title="Blocked groups"
        meta={`Groups held by a Failed webhook; later changes of the entity wait until it is resolved, aborted or retried. Refreshes every ${BLOCKED_GROUPS_REFRESH_MS / 1000} s.`}
      />
      {!mayUpdate && (
        <p className="notice notice--warn" role="status">
          Your account lacks the Webhook.Update permission, so it cannot release groups.
        </p>
      )}
      {released.length > 0 && (
        <section className="card section" aria-labelledby="released-heading">
          <h2 id="released-heading" className="section__title">
            Released groups
          </h2>
          <ul className="drains" aria-live="polite">
            {released.map((r) => (
              <DrainProgress
                key={`${r.registrationId}/${r.groupKey}`}
                released={r}
                onDismiss={() => setReleased((all) => all.filter((other) => other !== r))}
              />
            ))}
          </ul>
        </section>
      )}
      {groups.isPending ? (
        <Loading label="Loading blocked groups…" />
      ) : groups.isError ? (
        <ErrorState error={groups.error} onRetry={() => groups.refetch()} />
      ) : groups.data.totalCount === 0 ? (
        <EmptyState title="No blocked groups">
          <p>Every group is flowing. A group appears here when its head webhook fails every attempt.</p>
        </EmptyState>
      ) : (
        <>
          <div className="table-wrap">
            <table
              className="table table--stack"
              aria-label="Blocked groups"
              data-testid="blocked-groups-table"
            >
              <thead>
                <tr>
                  <th scope="col">Group</th>
                  <th scope="col">Registration</th>
                  <th scope="col">Blocker</th>
                  <th scope="col">Blocked since</th>
                  <th scope="col">Waiting behind it</th>
                  <th scope="col">Oldest waiting</th>
                  <th scope="col">
                    <span className="visually-hidden">Actions</span>
                  </th>
                </tr>
              </thead>
              <tbody>
                {groups.data.items.map((group) => (
                  <GroupRow
                    key={`${group.registrationId}/${group.groupKey}`}
                    group={group}
                    mayUpdate={mayUpdate}
                    onEnd={onEnd}
                  />
                ))}
              </tbody>
            </table>
          </div>
          <Pagination
            page={groups.data}
            noun="blocked groups"
            loading={groups.isPlaceholderData}
            onPageChange={setPageNumber}
          />
        </>
      )}
      {dialog}
    </>
  );
}
