import type { WebhookRead } from '@platform/shared';
import { DateTime } from '../../../components/ui/date-time';
import { EmptyState, ErrorState, Loading } from '../../../components/ui/feedback';
import { PageHeader } from '../../../components/ui/page-header';
import { Pagination } from '../../../components/ui/pagination';
import { StateBadge } from '../../../components/ui/state-badge';
import { Link, navigate, useLocation } from '../../../lib/router';
import { eventTypeName } from '../../../lib/webhook-states';
import { useWebhooks } from '../api/get-webhooks';
import {
  activeFilterCount,
  filtersFromSearch,
  filtersToSearch,
  PAGE_SIZES,
  type WebhookFilters,
} from '../utils/webhook-filters';
import { WebhookFiltersForm } from './webhook-filters-form';

function WebhookRow({ webhook }: { webhook: WebhookRead }) {
  return (
    <tr data-testid="webhook-row">
      <td data-label="ID">
        <Link to={`/webhooks/${webhook.id}`} aria-label={`Webhook ${webhook.id}`}>
          #{webhook.id}
        </Link>
      </td>
      <td data-label="State">
        <StateBadge state={webhook.state} />
      </td>
      <td data-label="Event">
        {webhook.entityName} {eventTypeName(webhook.eventType)}
      </td>
      <td data-label="Entity id">{webhook.entityId}</td>
      <td data-label="Registration">
        <Link
          to={`/registrations/${webhook.registrationId}`}
          aria-label={`Registration ${webhook.registrationId}`}
        >
          #{webhook.registrationId}
        </Link>
      </td>
      <td data-label="Attempts">{webhook.attemptCount}</td>
      <td data-label="Next attempt">
        <DateTime value={webhook.nextAttemptAt} />
      </td>
      <td data-label="Created">
        <DateTime value={webhook.created} />
      </td>
    </tr>
  );
}

/** Every webhook the operator may see, filtered and paged on the server, newest first. */
export function WebhooksPage() {
  const { search } = useLocation();
  const filters = filtersFromSearch(new URLSearchParams(search));
  const webhooks = useWebhooks(filters);
  const go = (next: WebhookFilters) => navigate(`/webhooks${filtersToSearch(next)}`);
  const filterCount = activeFilterCount(filters);

  return (
    <>
      <PageHeader
        title="Webhooks"
        meta={
          filterCount
            ? `${filterCount} filter${filterCount > 1 ? 's' : ''} applied`
            : 'All webhooks, newest first'
        }
      />
      {/* keyed by the address, so back/forward shows the filters of the list it shows */}
      <WebhookFiltersForm key={search} filters={filters} onApply={go} />
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
          <div className="table-wrap">
            <table
              className="table table--stack"
              aria-label="Webhooks"
              data-testid="webhooks-table"
              aria-busy={webhooks.isPlaceholderData}
            >
              <thead>
                <tr>
                  <th scope="col">ID</th>
                  <th scope="col">State</th>
                  <th scope="col">Event</th>
                  <th scope="col">Entity id</th>
                  <th scope="col">Registration</th>
                  <th scope="col">Attempts</th>
                  <th scope="col">Next attempt</th>
                  <th scope="col">Created</th>
                </tr>
              </thead>
              <tbody>
                {webhooks.data.items.map((webhook) => (
                  <WebhookRow key={webhook.id} webhook={webhook} />
                ))}
              </tbody>
            </table>
          </div>
          <div className="list-footer">
            <Pagination
              page={webhooks.data}
              noun="webhooks"
              loading={webhooks.isPlaceholderData}
              onPageChange={(page) => go({ ...filters, page })}
            />
            <label className="page-size">
              Per page
              <select
                value={filters.pageSize}
                onChange={(e) => go({ ...filters, page: 1, pageSize: Number(e.target.value) })}
              >
                {PAGE_SIZES.map((size) => (
                  <option key={size} value={size}>
                    {size}
                  </option>
                ))}
              </select>
            </label>
          </div>
        </>
      )}
    </>
  );
}
