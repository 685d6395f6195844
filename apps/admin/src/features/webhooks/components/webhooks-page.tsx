import { attemptSentRequest, type Page, type WebhookRead } from '@platform/shared';
import { useQueryClient } from '@tanstack/react-query';
import { useEffect, useId, useRef, useState } from 'react';
import { missingPermissionReason } from '../../../components/ui/action-button';
import { Button } from '../../../components/ui/button';
import { DateTime } from '../../../components/ui/date-time';
import { ConfirmDialog } from '../../../components/ui/dialog';
import { EmptyState, ErrorState, Loading } from '../../../components/ui/feedback';
import { PageHeader } from '../../../components/ui/page-header';
import { PageSizeSelect, Pagination } from '../../../components/ui/pagination';
import { StateBadge } from '../../../components/ui/state-badge';
import { BadLinkNotice } from '../../../components/ui/bad-link-notice';
import { DataTable } from '../../../components/ui/table';
import { useToast } from '../../../components/ui/toast';
import { formatCount } from '../../../lib/format';
import { queryRoots } from '../../../lib/query-keys';
import { Link, navigate, useLocation } from '../../../lib/router';
import { usePermission } from '../../../lib/use-session';
import { eventTypeName, WEBHOOK_ACTION_COPY, type WebhookAction } from '../../../lib/webhook-states';
import { OperationsPanel } from '../../webhook-operations/components/operations-panel';
import { operationSummary, type OperationFigures } from '../../webhook-operations/utils/operation-progress';
import { actOnWebhook } from '../api/act-on-webhook';
import { useWebhooks } from '../api/get-webhooks';
import { lastActionText } from '../utils/last-action';
import {
  activeFilterCount,
  ariaSort,
  describeFilters,
  filtersFromSearch,
  ignoredParams,
  filtersToBulkFilter,
  filtersToSearch,
  PAGE_SIZES,
  toggleSort,
  WEBHOOK_SORT_FIELDS,
  type WebhookFilters,
  type WebhookSortField,
} from '../utils/webhook-filters';
import { actOnSelected, type SelectedWebhook } from '../../webhook-operations/utils/act-in-sequence';
import {
  BULK_ACTION_COPY,
  BulkActionButtons,
  BulkActionDialog,
  type BulkRequest,
} from '../../webhook-operations/components/bulk-action-dialog';
import { ExportCsvButton } from './export-csv-button';
import { WebhookFiltersForm } from './webhook-filters-form';
import { TargetUrl } from '../../../components/ui/target-url';

const ACTIONS: WebhookAction[] = ['retry', 'abort', 'resolve'];

/** A column header that sorts the list by `field` (the API sorts; the address keeps it). */
function SortHeader({
  field,
  filters,
  onSort,
  children,
}: {
  field: WebhookSortField;
  filters: WebhookFilters;
  onSort: (field: WebhookSortField) => void;
  children: string;
}) {
  const sort = ariaSort(filters, field);
  return (
    <th scope="col" aria-sort={sort}>
      <button type="button" className="sort-button" onClick={() => onSort(field)}>
        {children}
        <span className="sort-button__mark" aria-hidden="true">
          {sort === 'ascending' ? '▲' : sort === 'descending' ? '▼' : '↕'}
        </span>
        <span className="visually-hidden">
          {sort ? `, sorted ${sort}; click to reverse` : ', click to sort'}
        </span>
      </button>
    </th>
  );
}

function WebhookRow({
  webhook,
  selectable,
  selected,
  onSelect,
}: {
  webhook: WebhookRead;
  /** Without Webhook.Update every action is disabled: no checkbox to tick for nothing. */
  selectable: boolean;
  selected: boolean;
  onSelect: (webhook: WebhookRead, selected: boolean) => void;
}) {
  return (
    <tr data-testid="webhook-row" aria-selected={selectable ? selected : undefined}>
      {selectable && (
        <td className="cell--select">
          <input
            type="checkbox"
            checked={selected}
            onChange={(event) => onSelect(webhook, event.target.checked)}
            aria-label={`Select webhook ${webhook.id}`}
          />
        </td>
      )}
      <td data-label="ID">
        <Link to={`/webhooks/${webhook.id}`} aria-label={`Webhook ${webhook.id}`}>
          #{webhook.id}
        </Link>
      </td>
      <td data-label="State">
        <StateBadge state={webhook.state} />
        {webhook.lastAction && (
          <span className="muted small cell-note" data-testid="webhook-last-action">
            {lastActionText(webhook.lastAction)}
          </span>
        )}
      </td>
      <td data-label="Event">
        {webhook.entityName} {eventTypeName(webhook.eventType)}
      </td>
      <td data-label="Entity id">{webhook.entityId}</td>
      <td data-label="Target" className="cell--url">
        <TargetUrl url={webhook.targetUrl} className="target-url" testId="webhook-target-url" />{' '}
        <Link
          to={`/registrations/${webhook.registrationId}`}
          aria-label={`Registration ${webhook.registrationId}`}
          className="small"
        >
          #{webhook.registrationId}
        </Link>
      </td>
      <td data-label="Attempts">{webhook.attemptCount}</td>
      <td data-label="Last attempt">
        <DateTime value={webhook.lastAttemptAt} />
      </td>
      <td data-label="Last status">
        <span data-testid="webhook-last-status">
          {webhook.lastStatusCode ?? <span className="muted">—</span>}
        </span>
        <LastRealAnswer webhook={webhook} />
      </td>
      <td data-label="Last error" data-testid="webhook-last-error">
        {webhook.lastErrorKind ? <code>{webhook.lastErrorKind}</code> : <span className="muted">—</span>}
      </td>
      <td data-label="Next attempt">
        <DateTime value={webhook.nextAttemptAt} />
      </td>
      <td data-label="Created">
        <DateTime value={webhook.created} />
      </td>
    </tr>
  );
}

/**
 * Beside a last attempt that sent no request (a `circuit-open` skip, …): the target's last real
 * answer, so a Failed row shows the HTTP 500 that opened the breaker rather than only the skip.
 */
function LastRealAnswer({ webhook }: { webhook: WebhookRead }) {
  if (webhook.lastAttemptAt === null || attemptSentRequest(webhook.lastErrorKind)) return null;
  const last = webhook.lastRequest;
  return (
    <span className="muted small cell-note" data-testid="webhook-last-request">
      {last === null
        ? 'no request sent yet'
        : `last answer: ${last.statusCode !== null ? `HTTP ${last.statusCode}` : (last.errorKind ?? 'OK')}`}
    </span>
  );
}

/** The selection checkbox of the header: all of the page, some (mixed) or none. */
function SelectPage({
  items,
  selected,
  onChange,
}: {
  items: readonly WebhookRead[];
  selected: ReadonlyMap<number, SelectedWebhook>;
  onChange: (all: boolean) => void;
}) {
  const ref = useRef<HTMLInputElement>(null);
  const count = items.filter((w) => selected.has(w.id)).length;
  const all = items.length > 0 && count === items.length;
  useEffect(() => {
    if (ref.current) ref.current.indeterminate = count > 0 && !all;
  }, [count, all]);
  return (
    <input
      ref={ref}
      type="checkbox"
      checked={all}
      onChange={(event) => onChange(event.target.checked)}
      aria-label="Select every webhook on this page"
    />
  );
}

/**
 * The actions of the table: on the selected rows (single actions, one after another), and on
 * everything the filters match, all pages (a bulk operation with a dry run first).
 */
function ActionsBar({
  selectable,
  selectedCount,
  totalCount,
  searching,
  mayUpdate,
  onClearSelection,
  onSelected,
  onBulk,
}: {
  /** Whether rows can be selected at all (the permission): without it the selection row is left out. */
  selectable: boolean;
  selectedCount: number;
  totalCount: number;
  /** A search is applied: a bulk filter cannot carry it, so "all matching" is not offered. */
  searching: boolean;
  mayUpdate: boolean;
  onClearSelection: () => void;
  onSelected: (action: WebhookAction) => void;
  onBulk: (action: WebhookAction) => void;
}) {
  const noticeId = useId();
  const selectionId = useId();
  const describedBy = mayUpdate ? undefined : noticeId;
  return (
    <section className="bulk-bar card" aria-label="Actions on webhooks" data-testid="bulk-bar">
      {selectable && (
        <div className="bulk-bar__row" role="group" aria-label="Selected webhooks">
          <span id={selectionId} className="bulk-bar__what" data-testid="selected-count" aria-live="polite">
            {selectedCount
              ? `${formatCount(selectedCount)} selected on this page`
              : 'None selected: tick rows to act on them'}
          </span>
          {ACTIONS.map((action) => (
            <Button
              key={action}
              size="small"
              disabled={!mayUpdate || selectedCount === 0}
              aria-describedby={describedBy ?? (selectedCount === 0 ? selectionId : undefined)}
              onClick={() => onSelected(action)}
            >
              {WEBHOOK_ACTION_COPY[action].label} selected
            </Button>
          ))}
          {selectedCount > 0 && (
            <Button size="small" variant="ghost" onClick={onClearSelection}>
              Clear selection
            </Button>
          )}
        </div>
      )}
      {searching ? (
        <p className="muted small" data-testid="bulk-search-note">
          Actions on everything matching are not offered for a search: select rows, or narrow with the filters
          alone.
        </p>
      ) : (
        <BulkActionButtons
          label="Every webhook matching the filters"
          what={<>All {formatCount(totalCount)} matching the filters, every page:</>}
          actions={ACTIONS}
          mayUpdate={mayUpdate}
          describedBy={describedBy}
          buttonLabel={(action) => BULK_ACTION_COPY[action].button}
          onAct={onBulk}
        />
      )}
      {!mayUpdate && (
        <p id={noticeId} className="action-hint" data-testid="action-disabled-reason">
          {missingPermissionReason('Webhook.Update')} You can look, not act.
        </p>
      )}
    </section>
  );
}

/** The table of one page of webhooks, with its selection (which the address resets: see `key`). */
function WebhookList({
  filters,
  page,
  placeholder,
  go,
  selectedRun,
  setSelectedRun,
  onBulk,
  onSelectionChange,
  onRefresh,
}: {
  filters: WebhookFilters;
  page: Page<WebhookRead>;
  placeholder: boolean;
  go: (next: WebhookFilters) => void;
  /** How many rows are ticked: the page pauses its auto-refresh while any are. */
  onSelectionChange: (count: number) => void;
  /** Reads the page again now (the operator's own refresh while the auto-refresh is paused). */
  onRefresh: () => void;
  /** The last run on selected rows: the page keeps it, so it outlives a list that empties. */
  selectedRun: OperationFigures | null;
  setSelectedRun: (figures: OperationFigures | null) => void;
  onBulk: (action: WebhookAction) => void;
}) {
  const toast = useToast();
  const queryClient = useQueryClient();
  const mayUpdate = usePermission('Webhook.Update');
  const [selected, setSelected] = useState<ReadonlyMap<number, SelectedWebhook>>(new Map());
  const [asked, setAsked] = useState<WebhookAction | null>(null);

  // rows refetched in another state keep their selection, with the state they now show; a row no
  // longer on the page (a refresh by hand moved it) leaves the selection: nothing is acted on unseen
  useEffect(() => {
    setSelected((current) => {
      if (current.size === 0) return current;
      const next = new Map<number, SelectedWebhook>();
      for (const webhook of page.items) {
        if (current.has(webhook.id)) next.set(webhook.id, { id: webhook.id, state: webhook.state });
      }
      return next;
    });
  }, [page.items]);
  useEffect(() => onSelectionChange(selected.size), [selected.size, onSelectionChange]);
  useEffect(() => () => onSelectionChange(0), [onSelectionChange]);

  const select = (webhook: WebhookRead, on: boolean) =>
    setSelected((current) => {
      const next = new Map(current);
      if (on) next.set(webhook.id, { id: webhook.id, state: webhook.state });
      else next.delete(webhook.id);
      return next;
    });
  const selectPage = (on: boolean) =>
    setSelected(on ? new Map(page.items.map((w) => [w.id, { id: w.id, state: w.state }])) : new Map());

  const runSelected = async (action: WebhookAction) => {
    setAsked(null);
    const rows = [...selected.values()];
    const result = await actOnSelected(rows, action, (id) => actOnWebhook(id, action), setSelectedRun);
    for (const queryKey of [queryRoots.webhooks, queryRoots.blockedGroups, queryRoots.webhookStats]) {
      void queryClient.invalidateQueries({ queryKey });
    }
    if (result.state === 'failed') toast.error(operationSummary(result));
    else {
      toast.success(operationSummary(result));
      setSelected(new Map());
    }
  };

  const copy = asked ? WEBHOOK_ACTION_COPY[asked] : undefined;
  const running = selectedRun?.state === 'running';
  const sortHeader = (field: WebhookSortField, label: string) => (
    <SortHeader field={field} filters={filters} onSort={(f) => go(toggleSort(filters, f))}>
      {label}
    </SortHeader>
  );
  return (
    <>
      <ActionsBar
        selectable={mayUpdate}
        selectedCount={selected.size}
        totalCount={page.totalCount}
        searching={Boolean(filters.q)}
        mayUpdate={mayUpdate && !running}
        onClearSelection={() => setSelected(new Map())}
        onSelected={setAsked}
        onBulk={onBulk}
      />
      {selected.size > 0 && (
        <p className="notice" role="status" data-testid="refresh-paused">
          Auto-refresh is paused while rows are selected, so the rows you ticked stay in place.{' '}
          <Button size="small" onClick={onRefresh}>
            Refresh now
          </Button>
        </p>
      )}
      <DataTable
        label="Webhooks"
        testId="webhooks-table"
        className="table--stack table--webhooks"
        busy={placeholder}
        columns={[
          ...(mayUpdate
            ? [
                <th scope="col" className="cell--select">
                  <SelectPage items={page.items} selected={selected} onChange={selectPage} />
                </th>,
              ]
            : []),
          sortHeader('id', 'ID'),
          sortHeader('state', 'State'),
          sortHeader('entityName', 'Event'),
          'Entity id',
          sortHeader('registrationId', 'Target (registration)'),
          sortHeader('attemptCount', 'Attempts'),
          'Last attempt',
          'Last status',
          'Last error',
          sortHeader('nextAttemptAt', 'Next attempt'),
          sortHeader('created', 'Created'),
        ]}
      >
        {page.items.map((webhook) => (
          <WebhookRow
            key={webhook.id}
            webhook={webhook}
            selectable={mayUpdate}
            selected={selected.has(webhook.id)}
            onSelect={select}
          />
        ))}
      </DataTable>
      <ConfirmDialog
        open={asked !== null}
        title={
          copy ? `${copy.label} ${selected.size} selected webhook${selected.size === 1 ? '' : 's'}?` : ''
        }
        confirmLabel={copy ? `${copy.label} ${selected.size}` : ''}
        confirmVariant={asked === 'retry' ? 'primary' : 'danger'}
        onConfirm={() => asked && void runSelected(asked)}
        onCancel={() => setAsked(null)}
      >
        <p>{copy?.explanation}</p>
        <p>
          Each is sent as its own action, one after another; those whose state does not allow it are skipped,
          and the outcome is summed up when all are done.
        </p>
      </ConfirmDialog>
    </>
  );
}

/** Every webhook the operator may see, filtered, sorted and paged on the server. */
export function WebhooksPage() {
  const { search } = useLocation();
  const filters = filtersFromSearch(new URLSearchParams(search));
  const ignored = ignoredParams(new URLSearchParams(search));
  const [selectionCount, setSelectionCount] = useState(0);
  const webhooks = useWebhooks(filters, { paused: selectionCount > 0 });
  const go = (next: WebhookFilters) => navigate(`/webhooks${filtersToSearch(next)}`);
  const filterCount = activeFilterCount(filters);
  const sortField = filters.sort ?? 'id';
  const [selectedRun, setSelectedRun] = useState<OperationFigures | null>(null);
  const [bulk, setBulk] = useState<BulkRequest | null>(null);
  const [bulkOperationId, setBulkOperationId] = useState<number | null>(null);
  const openBulk = (action: WebhookAction) =>
    setBulk({
      action,
      filter: filtersToBulkFilter(filters),
      description: describeFilters(filters),
    });

  return (
    <>
      <PageHeader
        title="Webhooks"
        meta={`${
          filterCount ? `${filterCount} filter${filterCount > 1 ? 's' : ''} applied` : 'All webhooks'
        } · sorted by ${WEBHOOK_SORT_FIELDS[sortField]}, ${filters.ascending ? 'ascending' : 'descending'}`}
      >
        <ExportCsvButton filters={filters} />
      </PageHeader>
      {/* keyed by the address, so back/forward shows the filters of the list it shows */}
      <WebhookFiltersForm key={search} filters={filters} onApply={go} />
      <BadLinkNotice problems={ignored} asRead={`/webhooks${filtersToSearch(filters)}`} noun="webhooks" />
      {webhooks.data && webhooks.data.totalCount > 0 && filters.page > webhooks.data.totalPages && (
        <div className="notice notice--warn" role="alert" data-testid="page-out-of-range">
          <p>
            Page {formatCount(filters.page)} does not exist: {formatCount(webhooks.data.totalCount)}
            {webhooks.data.totalCountCapped ? '+' : ''}{' '}
            {webhooks.data.totalCount === 1 ? 'webhook fills' : 'webhooks fill'}{' '}
            {formatCount(webhooks.data.totalPages)} page{webhooks.data.totalPages === 1 ? '' : 's'}.
          </p>
          <Link to={`/webhooks${filtersToSearch({ ...filters, page: webhooks.data.totalPages })}`}>
            Go to the last page
          </Link>
        </div>
      )}
      {/* the page keeps the last runs across lists (a list that empties goes) */}
      <OperationsPanel
        selectedRun={selectedRun}
        selectedRunLabel={
          selectedRun
            ? `${WEBHOOK_ACTION_COPY[selectedRun.action as WebhookAction].label} of ${selectedRun.total} selected`
            : undefined
        }
        onDismissSelected={() => setSelectedRun(null)}
        operationId={bulkOperationId}
        onDismissOperation={() => setBulkOperationId(null)}
      />
      {webhooks.isPending ? (
        <Loading label="Loading webhooks…" />
      ) : webhooks.isError ? (
        <ErrorState error={webhooks.error} onRetry={() => webhooks.refetch()} />
      ) : webhooks.data.totalCount === 0 ? (
        <EmptyState title={filterCount ? 'No webhook matches these filters' : 'No webhooks yet'}>
          <p>
            {filterCount
              ? 'Change or clear the filters to see more.'
              : 'A webhook is created for each subscribed change of a registration’s party.'}
          </p>
        </EmptyState>
      ) : (
        <>
          {/* keyed by the address: another filter, sort or page starts with nothing selected */}
          <WebhookList
            key={search}
            filters={filters}
            page={webhooks.data}
            placeholder={webhooks.isPlaceholderData}
            go={go}
            selectedRun={selectedRun}
            setSelectedRun={setSelectedRun}
            onBulk={openBulk}
            onSelectionChange={setSelectionCount}
            onRefresh={() => void webhooks.refetch()}
          />
          <div className="list-footer">
            <Pagination
              page={webhooks.data}
              noun="webhooks"
              loading={webhooks.isPlaceholderData}
              onPageChange={(page) => go({ ...filters, page })}
            />
            <label className="page-size">
              Sort by
              <select
                value={sortField}
                onChange={(e) =>
                  go({
                    ...filters,
                    page: 1,
                    sort: e.target.value === 'id' ? undefined : (e.target.value as WebhookSortField),
                  })
                }
              >
                {Object.entries(WEBHOOK_SORT_FIELDS).map(([field, label]) => (
                  <option key={field} value={field}>
                    {label}
                  </option>
                ))}
              </select>
            </label>
            <label className="page-size">
              Order
              <select
                value={filters.ascending ? 'asc' : 'desc'}
                onChange={(e) =>
                  go({ ...filters, page: 1, ascending: e.target.value === 'asc' || undefined })
                }
              >
                <option value="desc">Descending (newest, largest first)</option>
                <option value="asc">Ascending</option>
              </select>
            </label>
            <PageSizeSelect
              value={filters.pageSize}
              sizes={PAGE_SIZES}
              onChange={(pageSize) => go({ ...filters, page: 1, pageSize })}
            />
          </div>
        </>
      )}
      <BulkActionDialog request={bulk} onClose={() => setBulk(null)} onStarted={setBulkOperationId} />
    </>
  );
}
