import type { WebhookRegistrationHealth, WebhookRegistrationRead } from '@platform/shared';
import type { UseQueryResult } from '@tanstack/react-query';
import { useEffect, useState } from 'react';
import { Button } from '../../../components/ui/button';
import { DateTime } from '../../../components/ui/date-time';
import { ConfirmDialog } from '../../../components/ui/dialog';
import { EmptyState, ErrorState, Loading, PageLoadError } from '../../../components/ui/feedback';
import { PageHeader } from '../../../components/ui/page-header';
import { OpenPortalButton } from '../../../components/open-portal-button';
import { RegistrationStatusBadge } from '../../../components/ui/registration-status-badge';
import { StateBadge } from '../../../components/ui/state-badge';
import { DataTable } from '../../../components/ui/table';
import { useToast } from '../../../components/ui/toast';
import { errorMessage } from '../../../lib/api-client';
import { useRegistrationHealth } from '../../../lib/registration-health';
import { Link, navigate } from '../../../lib/router';
import { usePermission } from '../../../lib/use-session';
import { authTypeName, eventTypeName } from '../../../lib/webhook-states';
import { useDeleteRegistration } from '../api/delete-registration';
import { useRegistration } from '../api/get-registration';
import { RECENT_WEBHOOKS, useRegistrationWebhooks } from '../api/get-registration-webhooks';
import { statusVersion } from '../utils/health-labels';
import { eventsByEntity } from '../utils/registration-labels';
import { DeliverySettings } from './delivery-settings';
import { RecoverySection } from './recovery-section';
import { RegistrationHealthPanel } from './registration-health-panel';
import {
  RegistrationStatusActions,
  StatusBanner,
  useRegistrationStatusConfirmation,
} from './registration-status-actions';
import { DeliverySeries } from '../../overview/components/delivery-series';
import { TargetUrl } from '../../../components/ui/target-url';

function RecentWebhooks({ registrationId }: { registrationId: number }) {
  const webhooks = useRegistrationWebhooks(registrationId);
  return (
    <section className="section" aria-labelledby="recent-heading">
      <div className="section__header">
        <h2 id="recent-heading" className="section__title">
          Recent webhooks
        </h2>
        <Link to={`/webhooks?registrationId=${registrationId}`}>All webhooks of this registration</Link>
      </div>
      {webhooks.isPending ? (
        <Loading label="Loading webhooks…" />
      ) : webhooks.isError ? (
        <ErrorState error={webhooks.error} onRetry={() => webhooks.refetch()} />
      ) : webhooks.data.items.length === 0 ? (
        <EmptyState title="No webhooks yet">
          <p>A webhook appears here when a subscribed change happens in the registration’s party.</p>
        </EmptyState>
      ) : (
        <DataTable
          label={`The ${RECENT_WEBHOOKS} newest webhooks`}
          testId="recent-webhooks"
          columns={['ID', 'State', 'Event', 'Attempts', 'Created']}
        >
          {webhooks.data.items.map((webhook) => (
            <tr key={webhook.id}>
              <td data-label="ID">
                <Link to={`/webhooks/${webhook.id}`} aria-label={`Webhook ${webhook.id}`}>
                  #{webhook.id}
                </Link>
              </td>
              <td data-label="State">
                <StateBadge state={webhook.state} />
              </td>
              <td data-label="Event">
                {webhook.entityName} {webhook.entityId} {eventTypeName(webhook.eventType)}
              </td>
              <td data-label="Attempts">{webhook.attemptCount}</td>
              <td data-label="Created">
                <DateTime value={webhook.created} relative />
              </td>
            </tr>
          ))}
        </DataTable>
      )}
    </section>
  );
}

/** How often a registration's page refreshes its health (and so sees the dispatcher disable it). */
export const DETAIL_HEALTH_REFRESH_MS = 5_000;

/** One registration: its target, events, authorization type (never secrets), grouping and webhooks. */
export function RegistrationDetailPage({ id }: { id: number }) {
  const registration = useRegistration(id);
  const health = useRegistrationHealth(id, DETAIL_HEALTH_REFRESH_MS);

  // the dispatcher disables a registration by itself: the polled health sees it first, and the
  // registration (header, actions, banner) is read again whenever the two disagree
  const { refetch: refetchRegistration } = registration;
  const registrationVersion = registration.data && statusVersion(registration.data);
  const healthVersion = health.data && statusVersion(health.data);
  useEffect(() => {
    if (registrationVersion && healthVersion && registrationVersion !== healthVersion) {
      void refetchRegistration();
    }
  }, [registrationVersion, healthVersion, refetchRegistration]);

  if (registration.isPending) return <Loading label="Loading the registration…" />;
  if (registration.isError) {
    return (
      <PageLoadError
        title={`Registration ${id}`}
        error={registration.error}
        onRetry={() => registration.refetch()}
        back={{ to: '/registrations', label: 'Back to registrations' }}
      />
    );
  }
  return <RegistrationDetail data={registration.data} health={health} />;
}

function RegistrationDetail({
  data,
  health,
}: {
  data: WebhookRegistrationRead;
  health: UseQueryResult<WebhookRegistrationHealth>;
}) {
  const id = data.id;
  const remove = useDeleteRegistration();
  const mayDelete = usePermission('WebhookRegistration.Delete');
  const mayUpdate = usePermission('Webhook.Update');
  const mayEdit = usePermission('WebhookRegistration.Update');
  const toast = useToast();
  const [confirming, setConfirming] = useState(false);
  const status = useRegistrationStatusConfirmation(data);

  const confirmDelete = () =>
    remove.mutate(id, {
      onSuccess: () => {
        setConfirming(false);
        toast.success(`Registration ${id} deleted. Its undelivered webhooks were aborted.`);
        navigate('/registrations');
      },
      onError: (error) => {
        setConfirming(false);
        toast.error(`Registration ${id} was not deleted: ${errorMessage(error)}`);
      },
    });

  return (
    <>
      <PageHeader
        title={
          <>
            Registration {data.id} <RegistrationStatusBadge status={data.status} />
          </>
        }
        meta={<TargetUrl url={data.targetUrl} className="cell--url" />}
      >
        <RegistrationStatusActions registration={data} ask={status.ask} />
        {mayUpdate && <OpenPortalButton partyId={data.partyId} />}
        {mayDelete && (
          <Button variant="danger" onClick={() => setConfirming(true)}>
            Delete registration
          </Button>
        )}
      </PageHeader>

      <StatusBanner registration={data} mayReEnable={mayUpdate} onReEnable={() => status.ask('resume')} />

      <RegistrationHealthPanel health={health} />

      <DeliverySeries registrationId={data.id} />

      <RecoverySection registration={data} mayUpdate={mayUpdate} failingSince={health.data?.failingSince} />

      <section className="card section" aria-labelledby="settings-heading">
        <h2 id="settings-heading" className="section__title">
          Settings
        </h2>
        <dl className="details">
          <DeliverySettings registration={data} mayUpdate={mayEdit} />
          <div>
            <dt>Authorization</dt>
            <dd data-testid="registration-auth-type">{authTypeName(data.targetAuthorization.type)}</dd>
          </div>
          <div>
            <dt>Grouped</dt>
            <dd>{data.shouldGroup ? 'Yes: changes of one entity are delivered in order' : 'No'}</dd>
          </div>
          <div>
            <dt>Continue after a failure</dt>
            <dd>
              {!data.shouldGroup
                ? 'Not applicable'
                : data.shouldGroupContinueAfterFail
                  ? 'Yes: a Failed webhook does not hold its group'
                  : 'No: a Failed webhook holds its group'}
            </dd>
          </div>
          <div>
            <dt>Party</dt>
            <dd data-testid="registration-party">
              {data.partyName} <span className="muted small">(party {data.partyId})</span>
            </dd>
          </div>
          <div>
            <dt>Created</dt>
            <dd>
              <DateTime value={data.created} />
              {data.createdByAccountId !== null && (
                <span className="muted"> by account {data.createdByAccountId}</span>
              )}
            </dd>
          </div>
          <div>
            <dt>Last modified</dt>
            <dd>
              <DateTime value={data.lastModified} />
            </dd>
          </div>
        </dl>
        <p className="muted small">
          Credentials and the signing secret are never shown again. The target URL and the rate limit can
          change; events, authorization and grouping cannot: create a new registration and delete this one.
        </p>
      </section>

      <section className="card section" aria-labelledby="events-heading">
        <h2 id="events-heading" className="section__title">
          Events ({data.enabledEvents.length})
        </h2>
        <ul className="event-list" data-testid="registration-events">
          {eventsByEntity(data.enabledEvents).map((group) => (
            <li key={group.entityName}>
              <strong>{group.entityName}</strong>: {group.types.join(', ')}
            </li>
          ))}
        </ul>
      </section>

      <RecentWebhooks registrationId={data.id} />

      <ConfirmDialog
        open={confirming}
        title={`Delete registration ${data.id}?`}
        confirmLabel="Delete registration"
        confirmVariant="danger"
        busy={remove.isPending}
        onConfirm={confirmDelete}
        onCancel={() => setConfirming(false)}
      >
        <p>
          <span className="cell--url">{data.targetUrl}</span> will receive no more webhooks. Its undelivered
          webhooks (Created, Retrying, Failed, Pending) become Aborted. This cannot be undone.
        </p>
      </ConfirmDialog>
      {status.dialog}
    </>
  );
}
