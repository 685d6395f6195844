import { WebhookState, type BlockedGroupRead } from '@platform/shared';
import { useId, useState } from 'react';
import { missingPermissionReason } from '../../../components/ui/action-button';
import { Button } from '../../../components/ui/button';
import { DateTime } from '../../../components/ui/date-time';
import { ConfirmDialog } from '../../../components/ui/dialog';
import { EmptyState, ErrorState, Loading } from '../../../components/ui/feedback';
import { BadLinkNotice } from '../../../components/ui/bad-link-notice';
import { unreadParams } from '../../../lib/address-problems';
import { PageHeader } from '../../../components/ui/page-header';
import { Pagination } from '../../../components/ui/pagination';
import { DataTable } from '../../../components/ui/table';
import { useToast } from '../../../components/ui/toast';
import { useNow } from '../../../components/ui/use-now';
import { useWebhookActionConfirmation } from '../../../components/webhook-action-confirmation';
import { formatCount, formatRelative } from '../../../lib/format';
import { groupWebhooksPath } from '../../../lib/group-key';
import { useRegistrationOptions } from '../../../lib/registration-options';
import { Link, navigate, useLocation } from '../../../lib/router';
import { usePermission } from '../../../lib/use-session';
import { WEBHOOK_ACTION_COPY } from '../../../lib/webhook-states';
import {
  BulkActionButtons,
  BulkActionDialog,
  BULK_ACTION_COPY,
  type BulkRequest,
} from '../../webhook-operations/components/bulk-action-dialog';
import { OperationsPanel } from '../../webhook-operations/components/operations-panel';
import { actOnSelected } from '../../webhook-operations/utils/act-in-sequence';
import { operationSummary, type OperationFigures } from '../../webhook-operations/utils/operation-progress';
import { useEndBlocker, type BlockerAction } from '../api/end-blocker';
import { BLOCKED_GROUPS_REFRESH_MS, useBlockedGroups } from '../api/get-blocked-groups';
import { useGroupProgress } from '../api/get-group-progress';
import { groupProgress } from '../utils/group-progress';
import { blockedGroupsQueryFromSearch, blockedGroupsQueryToSearch } from '../utils/groups-address';
import { TargetUrl } from '../../../components/ui/target-url';

interface Released {
  registrationId: number;
  groupKey: string;
  blockerWebhookId: number;
  action: BlockerAction;
}

const ACTIONS: BlockerAction[] = ['retry', 'resolve', 'abort'];
const DONE: Readonly<Record<BlockerAction, string>> = {
  retry: 'retried',
  resolve: 'resolved',
  abort: 'aborted',
};

const groupId = (group: { registrationId: number; groupKey: string }) =>
  `${group.registrationId}/${group.groupKey}`;

/** A released group draining: its webhooks polled until nothing waits, is due or will be retried. */
function DrainProgress({ released, onDismiss }: { released: Released; onDismiss: () => void }) {
  const read = useGroupProgress(released);
  const now = useNow(5000);
  const progress = read.data ? groupProgress(read.data) : undefined;
  let status: string;
  if (!progress) status = read.isError ? 'Its progress could not be read.' : 'Reading its progress…';
  else if (progress.newBlockerId !== undefined && progress.inDelivery === 0 && progress.retrying === 0) {
    status = `Held again: webhook ${progress.newBlockerId} failed; ${formatCount(progress.waiting)} waiting behind it.`;
  } else if (progress.drained) status = 'Drained: nothing waits any more.';
  else {
    const parts = [
      `${formatCount(progress.waiting)} waiting`,
      `${formatCount(progress.inDelivery)} in delivery`,
    ];
    if (progress.retrying) {
      parts.push(
        `${formatCount(progress.retrying)} Retrying${
          progress.nextRetryAt ? ` (next attempt ${formatRelative(progress.nextRetryAt, now)})` : ''
        }`,
      );
    }
    status = `Draining: ${parts.join(', ')}.`;
  }
  return (
    <li className="drain" data-testid="drain-progress">
      <div className="drain__text">
        <strong>
          <code>{released.groupKey}</code>
        </strong>{' '}
        of{' '}
        <Link to={`/registrations/${released.registrationId}`}>registration {released.registrationId}</Link>:
        webhook {released.blockerWebhookId} {DONE[released.action]}.{' '}
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
  targetUrl,
  mayUpdate,
  noticeId,
  selected,
  onSelect,
  onAct,
}: {
  group: BlockedGroupRead;
  targetUrl?: string;
  mayUpdate: boolean;
  noticeId: string;
  selected: boolean;
  onSelect: (group: BlockedGroupRead, on: boolean) => void;
  onAct: (group: BlockedGroupRead, action: BlockerAction) => void;
}) {
  // a blocker with nothing behind it holds no delivery back; one with work behind it does
  const stuck = group.pendingCount > 0;
  return (
    <tr
      data-testid="blocked-group"
      data-stuck={stuck}
      className={stuck ? 'blocked-group--stuck' : 'blocked-group--idle'}
      aria-selected={mayUpdate ? selected : undefined}
    >
      {/* without Webhook.Update every action is disabled: no checkbox to tick for nothing */}
      {mayUpdate && (
        <td className="cell--select">
          <input
            type="checkbox"
            checked={selected}
            onChange={(event) => onSelect(group, event.target.checked)}
            aria-label={`Select group ${group.groupKey} of registration ${group.registrationId}`}
          />
        </td>
      )}
      <th scope="row" data-label="Group">
        <Link to={groupWebhooksPath(group.registrationId, group.groupKey)}>
          <code>{group.groupKey}</code>
        </Link>
      </th>
      <td data-label="Registration">
        {targetUrl && <TargetUrl url={targetUrl} className="target-url" />}{' '}
        <Link
          to={`/registrations/${group.registrationId}`}
          aria-label={`Registration ${group.registrationId}`}
          className="small"
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
      <td data-label="Waiting behind it">
        <span
          className={`badge ${stuck ? 'badge--tone-bad' : 'badge--tone-none'}`}
          data-testid="group-waiting"
        >
          <span data-testid="pending-count">{formatCount(group.pendingCount)}</span>
          {stuck ? ' stuck behind it' : ': nothing waiting'}
        </span>
      </td>
      <td data-label="Oldest waiting">
        <DateTime value={group.oldestPendingCreated} />
      </td>
      <td data-label="Actions" className="cell--wide">
        <div className="row-actions">
          {ACTIONS.map((action) => (
            <Button
              key={action}
              size="small"
              variant={action === 'abort' ? 'danger' : action === 'retry' ? 'primary' : 'secondary'}
              disabled={!mayUpdate}
              aria-describedby={mayUpdate ? undefined : noticeId}
              onClick={() => onAct(group, action)}
              aria-label={`${WEBHOOK_ACTION_COPY[action].label} blocker ${group.blockerWebhookId} of ${group.groupKey}`}
            >
              {WEBHOOK_ACTION_COPY[action].label} blocker
            </Button>
          ))}
        </div>
      </td>
    </tr>
  );
}

/** Groups held by a Failed webhook: retry or end the blockers, one, several or all, and watch them drain. */
export function WebhookGroupsPage() {
  // the registration filter and the page live in the address, so a filtered list can be linked
  const { search } = useLocation();
  const query = blockedGroupsQueryFromSearch(new URLSearchParams(search));
  const { registrationId, page: pageNumber } = query;
  const go = (next: { registrationId?: number; page: number }) =>
    navigate(`/webhook-groups${blockedGroupsQueryToSearch(next)}`);
  const groups = useBlockedGroups(pageNumber, registrationId);
  const registrations = useRegistrationOptions();
  const targetUrlOf = (id: number) => registrations.data?.items.find((r) => r.id === id)?.targetUrl;
  const mayUpdate = usePermission('Webhook.Update');
  const noticeId = useId();
  const toast = useToast();
  const endBlocker = useEndBlocker();
  const [released, setReleased] = useState<Released[]>([]);
  const [selected, setSelected] = useState<ReadonlyMap<string, BlockedGroupRead>>(new Map());
  const [askedSelected, setAskedSelected] = useState<BlockerAction | null>(null);
  const [selectedRun, setSelectedRun] = useState<OperationFigures | null>(null);
  const [bulk, setBulk] = useState<BulkRequest | null>(null);
  const [bulkOperationId, setBulkOperationId] = useState<number | null>(null);

  const watch = (group: BlockedGroupRead, action: BlockerAction) =>
    setReleased((all) => [
      {
        registrationId: group.registrationId,
        groupKey: group.groupKey,
        blockerWebhookId: group.blockerWebhookId,
        action,
      },
      ...all.filter((r) => groupId(r) !== groupId(group)),
    ]);

  const { ask, dialog } = useWebhookActionConfirmation(async (webhookId, action) => {
    const group = groups.data?.items.find((g) => g.blockerWebhookId === webhookId);
    await endBlocker.mutateAsync({ webhookId, action });
    if (group) watch(group, action);
  });
  const onAct = (group: BlockedGroupRead, action: BlockerAction) =>
    ask(
      group.blockerWebhookId,
      action,
      <p>
        It holds group <code>{group.groupKey}</code> of registration {group.registrationId}, with{' '}
        {formatCount(group.pendingCount)} webhook{group.pendingCount === 1 ? '' : 's'} waiting behind it.
        {action === 'retry' &&
          ' The group moves on once it is delivered; if it fails again, it holds the group again.'}
      </p>,
    );

  const select = (group: BlockedGroupRead, on: boolean) =>
    setSelected((current) => {
      const next = new Map(current);
      if (on) next.set(groupId(group), group);
      else next.delete(groupId(group));
      return next;
    });

  const runSelected = async (action: BlockerAction) => {
    setAskedSelected(null);
    const chosen = [...selected.values()];
    const result = await actOnSelected(
      chosen.map((g) => ({ id: g.blockerWebhookId, state: WebhookState.Failed })),
      action,
      async (webhookId) => {
        await endBlocker.mutateAsync({ webhookId, action });
        const group = chosen.find((g) => g.blockerWebhookId === webhookId);
        if (group) watch(group, action);
      },
      setSelectedRun,
    );
    if (result.state === 'failed') toast.error(operationSummary(result));
    else {
      toast.success(operationSummary(result));
      setSelected(new Map());
    }
  };

  const bulkFor = (action: BlockerAction, id: number) => {
    const url = targetUrlOf(id);
    setBulk({
      action,
      filter: { registrationId: id, states: [WebhookState.Failed] },
      description: `the Failed webhooks of registration ${id}${url ? ` (${url})` : ''}: the blockers of its blocked groups`,
      title: `${WEBHOOK_ACTION_COPY[action].label} every blocker of registration ${id}?`,
    });
  };

  const copy = askedSelected ? WEBHOOK_ACTION_COPY[askedSelected] : undefined;
  const running = selectedRun?.state === 'running';
  return (
    <>
      <PageHeader
        title="Webhook groups (blocked)"
        meta={`Groups held by a Failed webhook; later changes of the entity wait until it is retried and delivered, resolved or aborted. Refreshes every ${BLOCKED_GROUPS_REFRESH_MS / 1000} s.`}
      />
      <BadLinkNotice
        problems={unreadParams(new URLSearchParams(search), query, {
          registrationId: 'not a registration id',
          page: 'not a page number',
        })}
        asRead={`/webhook-groups${blockedGroupsQueryToSearch(query)}`}
        noun="groups"
      />
      {!mayUpdate && (
        <p id={noticeId} className="notice notice--warn" role="status" data-testid="action-disabled-reason">
          {missingPermissionReason('Webhook.Update')} It cannot retry or release groups; the buttons are
          disabled.
        </p>
      )}
      <div className="filters card blocked-filters">
        <label className="page-size">
          Registration
          <select
            value={registrationId ?? ''}
            onChange={(event) => {
              go({ registrationId: event.target.value ? Number(event.target.value) : undefined, page: 1 });
              setSelected(new Map());
            }}
          >
            <option value="">Every registration</option>
            {registrations.data?.items.map((r) => (
              <option key={r.id} value={r.id}>
                #{r.id} {r.targetUrl}
              </option>
            ))}
          </select>
        </label>
        {registrationId !== undefined && groups.data && groups.data.totalCount > 0 && (
          <BulkActionButtons
            label="Every blocker of this registration"
            what={
              <>
                All {formatCount(groups.data.totalCount)} blocked group
                {groups.data.totalCount === 1 ? '' : 's'} of registration {registrationId}:
              </>
            }
            actions={ACTIONS}
            mayUpdate={mayUpdate}
            describedBy={mayUpdate ? undefined : noticeId}
            buttonLabel={(action) => `${BULK_ACTION_COPY[action].verb} every blocker…`}
            onAct={(action) => bulkFor(action, registrationId)}
          />
        )}
      </div>
      {selected.size > 0 && (
        <div className="bulk-bar card" role="group" aria-label="Selected groups">
          <div className="bulk-bar__row">
            <span className="bulk-bar__what" aria-live="polite" data-testid="selected-count">
              {formatCount(selected.size)} group{selected.size === 1 ? '' : 's'} selected
            </span>
            {ACTIONS.map((action) => (
              <Button
                key={action}
                size="small"
                disabled={!mayUpdate || running}
                aria-describedby={mayUpdate ? undefined : noticeId}
                onClick={() => setAskedSelected(action)}
              >
                {WEBHOOK_ACTION_COPY[action].label} selected blockers
              </Button>
            ))}
            <Button size="small" variant="ghost" onClick={() => setSelected(new Map())}>
              Clear selection
            </Button>
          </div>
        </div>
      )}
      <OperationsPanel
        selectedRun={selectedRun}
        selectedRunLabel={
          selectedRun
            ? `${WEBHOOK_ACTION_COPY[selectedRun.action as BlockerAction].label} of ${selectedRun.total} selected blockers`
            : undefined
        }
        onDismissSelected={() => setSelectedRun(null)}
        operationId={bulkOperationId}
        onDismissOperation={() => setBulkOperationId(null)}
      />
      {released.length > 0 && (
        <section className="card section" aria-labelledby="released-heading">
          <h2 id="released-heading" className="section__title">
            Released groups
          </h2>
          <ul className="drains" aria-live="polite">
            {released.map((r) => (
              <DrainProgress
                key={groupId(r)}
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
          <p className="muted small blocked-legend">
            <span className="badge badge--tone-bad">N stuck behind it</span>: webhooks wait behind the
            blocker. <span className="badge badge--tone-none">0: nothing waiting</span>: the blocker holds
            nothing back yet (a later change of its entity would wait).
          </p>
          <DataTable
            label="Blocked groups"
            testId="blocked-groups-table"
            columns={[
              ...(mayUpdate
                ? [
                    <th scope="col" className="cell--select">
                      <input
                        type="checkbox"
                        aria-label="Select every group on this page"
                        checked={
                          groups.data.items.length > 0 &&
                          groups.data.items.every((g) => selected.has(groupId(g)))
                        }
                        onChange={(event) =>
                          setSelected(
                            event.target.checked
                              ? new Map(groups.data.items.map((g) => [groupId(g), g]))
                              : new Map(),
                          )
                        }
                      />
                    </th>,
                  ]
                : []),
              'Group',
              'Target (registration)',
              'Blocker',
              'Blocked since',
              'Waiting behind it',
              'Oldest waiting',
              <th scope="col">
                <span className="visually-hidden">Actions</span>
              </th>,
            ]}
          >
            {groups.data.items.map((group) => (
              <GroupRow
                key={groupId(group)}
                group={group}
                targetUrl={targetUrlOf(group.registrationId)}
                mayUpdate={mayUpdate}
                noticeId={noticeId}
                selected={selected.has(groupId(group))}
                onSelect={select}
                onAct={onAct}
              />
            ))}
          </DataTable>
          <Pagination
            page={groups.data}
            noun="blocked groups"
            loading={groups.isPlaceholderData}
            onPageChange={(page) => go({ registrationId, page })}
          />
        </>
      )}
      {dialog}
      <ConfirmDialog
        open={askedSelected !== null}
        title={
          copy ? `${copy.label} the blockers of ${selected.size} group${selected.size === 1 ? '' : 's'}?` : ''
        }
        confirmLabel={copy ? `${copy.label} ${selected.size} blocker${selected.size === 1 ? '' : 's'}` : ''}
        confirmVariant={askedSelected === 'abort' ? 'danger' : 'primary'}
        onConfirm={() => askedSelected && void runSelected(askedSelected)}
        onCancel={() => setAskedSelected(null)}
      >
        <p>{copy?.explanation}</p>
        <p>
          Each blocker is sent as its own action, one after another; every released group is watched below.
        </p>
      </ConfirmDialog>
      <BulkActionDialog request={bulk} onClose={() => setBulk(null)} onStarted={setBulkOperationId} />
    </>
  );
}
