import type { WebhookRegistrationRead } from '@platform/shared';
import { DateTime } from '../../../components/ui/date-time';
import { EmptyState, ErrorState, Loading } from '../../../components/ui/feedback';
import { PageHeader } from '../../../components/ui/page-header';
import { Pagination } from '../../../components/ui/pagination';
import { DataTable } from '../../../components/ui/table';
import { RegistrationStatusBadge } from '../../../components/ui/registration-status-badge';
import { Link, navigate, useSearchParams } from '../../../lib/router';
import { usePermission } from '../../../lib/use-session';
import { authTypeName } from '../../../lib/webhook-states';
import { useRegistrations } from '../api/get-registrations';
import { eventsSummary, groupingLabel } from '../utils/registration-labels';
import { RegistrationHealthCell } from './registration-health-badge';
import { TargetUrl } from '../../../components/ui/target-url';

const PAGE_SIZE = 20;

function RegistrationRow({ registration }: { registration: WebhookRegistrationRead }) {
  return (
    <tr>
      <td data-label="ID">
        <Link to={`/registrations/${registration.id}`} aria-label={`Registration ${registration.id}`}>
          #{registration.id}
        </Link>
      </td>
      <td data-label="Target URL" className="cell--url cell--wide">
        <TargetUrl url={registration.targetUrl} />
      </td>
      <td data-label="Status">
        <RegistrationStatusBadge status={registration.status} />
      </td>
      <td data-label="Health (last hour)">
        <RegistrationHealthCell registrationId={registration.id} />
      </td>
      <td data-label="Events" className="cell--wide">
        {eventsSummary(registration.enabledEvents)}
      </td>
      <td data-label="Grouping">{groupingLabel(registration)}</td>
      <td data-label="Authorization">{authTypeName(registration.targetAuthorization.type)}</td>
      <td data-label="Created">
        <DateTime value={registration.created} />
      </td>
    </tr>
  );
}

/** Every webhook registration the operator may see, newest first. */
export function RegistrationsPage() {
  const params = useSearchParams();
  const pageNumber = Math.max(1, Number(params.get('page')) || 1);
  const registrations = useRegistrations({ pageNumber, pageSize: PAGE_SIZE });
  const mayCreate = usePermission('WebhookRegistration.Create');

  return (
    <>
      <PageHeader
        title="Registrations"
        meta="Targets that receive webhooks, and the events they subscribe to."
      >
        <Link to="/webhook-notifications" className="button button--ghost">
          Notifications
        </Link>
        {mayCreate && (
          <Link to="/registrations/new" className="button button--primary">
            New registration
          </Link>
        )}
      </PageHeader>
      {registrations.isPending ? (
        <Loading label="Loading registrations…" />
      ) : registrations.isError ? (
        <ErrorState error={registrations.error} onRetry={() => registrations.refetch()} />
      ) : registrations.data.totalCount === 0 ? (
        <EmptyState title="No registrations yet">
          <p>A registration names a target URL and the changes it should receive.</p>
          {mayCreate && (
            <Link to="/registrations/new" className="button button--primary">
              Create the first registration
            </Link>
          )}
        </EmptyState>
      ) : (
        <>
          <DataTable
            label="Registrations"
            testId="registrations-table"
            columns={[
              'ID',
              'Target URL',
              'Status',
              'Health (last hour)',
              'Events',
              'Grouping',
              'Authorization',
              'Created',
            ]}
          >
            {registrations.data.items.map((registration) => (
              <RegistrationRow key={registration.id} registration={registration} />
            ))}
          </DataTable>
          <Pagination
            page={registrations.data}
            noun="registrations"
            loading={registrations.isPlaceholderData}
            onPageChange={(page) => navigate(`/registrations?page=${page}`)}
          />
        </>
      )}
    </>
  );
}
