import type { BulkWebhookAction, WebhookIssueRead } from '@platform/shared';
import { useId, useState } from 'react';
import { ActionButton } from '../../../components/ui/action-button';
import { DateTime } from '../../../components/ui/date-time';
import { EmptyState, ErrorState, Loading } from '../../../components/ui/feedback';
import { BadLinkNotice } from '../../../components/ui/bad-link-notice';
import { unreadParams } from '../../../lib/address-problems';
import { PageHeader } from '../../../components/ui/page-header';
import { PageSizeSelect, Pagination } from '../../../components/ui/pagination';
import { StateBadge } from '../../../components/ui/state-badge';
import { DataTable } from '../../../components/ui/table';
import { formatCount } from '../../../lib/format';
import { Link, navigate, useLocation } from '../../../lib/router';
import { usePermission } from '../../../lib/use-session';
import { BulkActionDialog, type BulkRequest } from '../../webhook-operations/components/bulk-action-dialog';
import { OperationsPanel } from '../../webhook-operations/components/operations-panel';
import { useWebhookIssues } from '../api/get-webhook-issues';
import {
  LINE_ACTION_COPY,
  LINE_ACTIONS,
  lineActionAvailability,
  lineName,
  lineProblem,
  lineWebhooksPath,
  WEBHOOK_ISSUE_PAGE_SIZES,
  webhookIssueQueryFromSearch,
  webhookIssueQueryToSearch,
  type WebhookIssueQuery,
} from '../utils/webhook-issues';
import { TargetUrl } from '../../../components/ui/target-url';

interface Asked {
  line: WebhookIssueRead;
  action: BulkWebhookAction;
}

function IssueRow({
  line,
  mayUpdate,
  permissionNoticeId,
  onAct,
}: {
  line: WebhookIssueRead;
  mayUpdate: boolean;
  permissionNoticeId: string;
  onAct: (asked: Asked) => void;
}) {
  const name = lineName(line);
  return (
    <tr data-testid="triage-line">
      <th scope="row" data-label="Registration">
        <Link to={`/registrations/${line.registrationId}`} aria-label={`Registration ${line.registrationId}`}>
          #{line.registrationId}
        </Link>
        <div className="cell--url muted small">
          <TargetUrl url={line.targetUrl} />
        </div>
      </th>
      <td data-label="State">
        <StateBadge state={line.state} />
      </td>
      <td data-label="Error" data-testid="triage-problem">
        {lineProblem(line)}
      </td>
      <td data-label="Webhooks" data-testid="triage-count">
        {formatCount(line.count)}
      </td>
      <td data-label="Seen">
        <span className="muted small">last </span>
        <DateTime value={line.lastSeen} relative />
        <div className="muted small">
          first <DateTime value={line.firstSeen} />
        </div>
      </td>
      <td data-label="See them">
        <Link
          to={`/webhooks/${line.sampleWebhookId}`}
          aria-label={`Sample webhook ${line.sampleWebhookId} of ${name}`}
        >
          Sample #{line.sampleWebhookId}
        </Link>
        <br />
        <Link to={lineWebhooksPath(line)} aria-label={`Webhooks table for ${name}`}>
          In the table
        </Link>
      </td>
      <td data-label="Actions" className="cell--wide">
        <div className="row-actions" role="group" aria-label={`Actions on ${name}`}>
          {LINE_ACTIONS.map((action) => (
            <ActionButton
              key={action}
              size="small"
              variant={action === 'retry' ? 'primary' : action === 'abort' ? 'danger' : 'secondary'}
              availability={lineActionAvailability(action, line)}
              missingPermission={mayUpdate ? undefined : 'Webhook.Update'}
              permissionNoticeId={permissionNoticeId}
              onClick={() => onAct({ line, action })}
            >
              {LINE_ACTION_COPY[action].label}
            </ActionButton>
          ))}
        </div>
      </td>
    </tr>
  );
}

/**
 * Triage: the Failed and Retrying webhooks grouped by registration, error kind and last status
 * code, biggest trouble first as the API orders it, each line acted on as a whole.
 */
export function WebhookIssuesPage() {
  const { search } = useLocation();
  const query = webhookIssueQueryFromSearch(new URLSearchParams(search));
  const issues = useWebhookIssues(query);
  const mayUpdate = usePermission('Webhook.Update');
  const permissionNoticeId = useId();
  const [bulk, setBulk] = useState<BulkRequest | null>(null);
  const [operationId, setOperationId] = useState<number | null>(null);
  const ask = ({ line, action }: Asked) =>
    setBulk({
      action,
      filter: line.filter,
      description: lineName(line),
      title: `${LINE_ACTION_COPY[action].verb} every webhook of ${lineName(line)}?`,
    });
  const go = (next: WebhookIssueQuery) => navigate(`/webhook-issues${webhookIssueQueryToSearch(next)}`);

  return (
    <>
      <PageHeader
        title="Webhook issues (triage)"
        meta={
          query.registrationId !== undefined ? (
            <>
              Registration {query.registrationId} only · <Link to="/webhook-issues">All registrations</Link>
            </>
          ) : (
            'Failed and Retrying webhooks, grouped by registration, error and status'
          )
        }
      />
      <BadLinkNotice
        problems={unreadParams(new URLSearchParams(search), query, {
          registrationId: 'not a registration id',
          page: 'not a page number',
          pageSize: `one of ${WEBHOOK_ISSUE_PAGE_SIZES.join(', ')}`,
        })}
        asRead={`/webhook-issues${webhookIssueQueryToSearch(query)}`}
        noun="lines"
      />
      {!mayUpdate && (
        <p className="notice notice--warn" id={permissionNoticeId} data-testid="triage-permission-note">
          Your account lacks the Webhook.Update permission, so retry, abort and resolve are disabled.
        </p>
      )}
      <OperationsPanel
        label="Action in progress or done"
        operationId={operationId}
        onDismissOperation={() => setOperationId(null)}
      />
      {issues.isPending ? (
        <Loading label="Loading triage…" />
      ) : issues.isError ? (
        <ErrorState error={issues.error} onRetry={() => issues.refetch()} />
      ) : issues.data.totalCount === 0 ? (
        <EmptyState title="Nothing to triage">
          <p>
            No webhook is Failed or Retrying
            {query.registrationId !== undefined ? ' for this registration' : ''}.
          </p>
        </EmptyState>
      ) : (
        <>
          <DataTable
            label="Triage lines"
            testId="triage-table"
            busy={issues.isPlaceholderData}
            columns={[
              'Registration / target',
              'State',
              'Error',
              'Webhooks',
              'Seen (last attempt)',
              'See them',
              'Actions',
            ]}
          >
            {issues.data.items.map((line) => (
              <IssueRow
                key={JSON.stringify(line.filter)}
                line={line}
                mayUpdate={mayUpdate}
                permissionNoticeId={permissionNoticeId}
                onAct={ask}
              />
            ))}
          </DataTable>
          <div className="list-footer">
            <Pagination
              page={issues.data}
              noun="lines"
              loading={issues.isPlaceholderData}
              onPageChange={(page) => go({ ...query, page })}
            />
            <PageSizeSelect
              value={query.pageSize}
              sizes={WEBHOOK_ISSUE_PAGE_SIZES}
              onChange={(pageSize) => go({ ...query, page: 1, pageSize })}
            />
          </div>
        </>
      )}
      <BulkActionDialog request={bulk} onClose={() => setBulk(null)} onStarted={setOperationId} />
    </>
  );
}
