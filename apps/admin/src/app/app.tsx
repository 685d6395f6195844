import { useEffect } from 'react';
import { EmptyState } from '../components/ui/feedback';
import { PageHeader } from '../components/ui/page-header';
import { SignInPage } from '../features/auth/components/sign-in-page';
import { EventCatalog } from '../features/event-catalog/components/event-catalog';
import { OperatorActionsPage } from '../features/operator-actions/components/operator-actions-page';
import { WebhookOperationPage } from '../features/webhook-operations/components/webhook-operation-page';
import { WebhookGroupsPage } from '../features/webhook-groups/components/webhook-groups-page';
import { OverviewPage } from '../features/overview/components/overview-page';
import { RegistrationCreatePage } from '../features/registrations/components/registration-create-page';
import { RegistrationDetailPage } from '../features/registrations/components/registration-detail-page';
import { RegistrationsPage } from '../features/registrations/components/registrations-page';
import { NotificationsPage } from '../features/webhook-notifications/components/notifications-page';
import { WebhookIssuesPage } from '../features/webhook-issues/components/webhook-issues-page';
import { WebhookDetailPage } from '../features/webhooks/components/webhook-detail-page';
import { WebhooksPage } from '../features/webhooks/components/webhooks-page';
import { sessionStore } from '../lib/api';
import { Link, navigate, useLocation } from '../lib/router';
import { useSession } from '../lib/use-session';
import { AppProvider } from './provider';
import { matchRoute, titleOf, type Route } from './route-table';
import { Shell } from './shell';

function Screen({ route }: { route: Route }) {
  switch (route.name) {
    case 'overview':
      return <OverviewPage />;
    case 'webhooks':
      return <WebhooksPage />;
    case 'webhook':
      // keyed, so moving between webhooks starts each page afresh
      return <WebhookDetailPage key={route.id} id={route.id} />;
    case 'registrations':
      return <RegistrationsPage />;
    case 'registration-new':
      return <RegistrationCreatePage />;
    case 'registration':
      return <RegistrationDetailPage key={route.id} id={route.id} />;
    case 'webhook-groups':
      return <WebhookGroupsPage />;
    case 'webhook-issues':
      return <WebhookIssuesPage />;
    case 'operator-actions':
      return <OperatorActionsPage />;
    case 'webhook-operation':
      return <WebhookOperationPage key={route.id} id={route.id} />;
    case 'event-catalog':
      return (
        <>
          <PageHeader title="Event catalog" />
          <EventCatalog />
        </>
      );
    case 'notifications':
      return <NotificationsPage />;
    case 'moved':
      return null;
    default:
      return (
        <>
          <PageHeader title="Page not found" />
          <EmptyState title="There is no screen at this address.">
            <Link to="/">Go to the overview</Link>
          </EmptyState>
        </>
      );
  }
}

/**
 * Signed out, the sign-in page stands in for whatever screen the address names; signing in shows
 * that screen, so a session that ends mid-work resumes where it was.
 */
function Console() {
  const session = useSession();
  const { path, search } = useLocation();
  const route = matchRoute(path);
  // an old address: the screen's own, keeping the query, in place of it in the history
  const movedTo = route.name === 'moved' ? `${route.to}${search}` : undefined;
  useEffect(() => {
    if (movedTo !== undefined) navigate(movedTo, { replace: true });
  }, [movedTo]);
  const title = session ? `${titleOf(route)} · Webhooks console` : 'Sign in · Webhooks console';
  useEffect(() => {
    document.title = title;
  }, [title]);
  if (!session) return <SignInPage endReason={sessionStore.endReason()} />;
  return (
    <Shell session={session}>
      <Screen route={route} />
    </Shell>
  );
}

/** The operator console. */
export function App() {
  return (
    <AppProvider>
      <Console />
    </AppProvider>
  );
}
