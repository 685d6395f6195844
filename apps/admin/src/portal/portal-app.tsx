import {
  WebhookState,
  type PortalAction,
  type PortalTheme,
  type WebhookPortalSessionRead,
  type WebhookRegistrationCreated,
  type WebhookRegistrationRead,
} from '@platform/shared';
import { QueryClient, QueryClientProvider } from '@tanstack/react-query';
import { useState, useSyncExternalStore, type CSSProperties } from 'react';
import { Button } from '../components/ui/button';
import { DateTime } from '../components/ui/date-time';
import { EmptyState, ErrorState, Loading } from '../components/ui/feedback';
import { RegistrationStatusBadge } from '../components/ui/registration-status-badge';
import { StateBadge } from '../components/ui/state-badge';
import { DataTable } from '../components/ui/table';
import { ToastProvider } from '../components/ui/toast';
import { EventCatalog } from '../features/event-catalog/components/event-catalog';
import { useRegistrationWebhooks } from '../features/registrations/api/get-registration-webhooks';
import { DeliverySettings } from '../features/registrations/components/delivery-settings';
import { RegistrationCreateForm } from '../features/registrations/components/registration-create-form';
import { SigningSecretPanel } from '../features/registrations/components/signing-secret-panel';
import { useRegistrations } from '../features/registrations/api/get-registrations';
import { useRotateSecret } from '../features/registrations/api/rotate-secret';
import { useSendTestEvent } from '../features/registrations/api/send-test-event';
import { useSetRegistrationStatus } from '../features/registrations/api/set-registration-status';
import {
  HealthBadge,
  RegistrationHealthCell,
} from '../features/registrations/components/registration-health-badge';
import { useActOnWebhook } from '../features/webhooks/api/act-on-webhook';
import { useWebhook } from '../features/webhooks/api/get-webhook';
import { useWebhookAttempts } from '../features/webhooks/api/get-webhook-attempts';
import { AttemptTimeline } from '../features/webhooks/components/attempt-timeline';
import { startWindowOperation } from '../features/webhook-operations/api/start-webhook-operation';
import { usePortalSession } from '../features/webhook-portal/api/get-portal-session';
import { shouldRetry } from '../app/provider';
import { ApiError, errorMessage } from '../lib/api-client';
import { portalSessionStore } from '../lib/api';
import { useRegistrationHealth } from '../lib/registration-health';
import { SessionExpiredError } from '../lib/session';

/** The CSS variables of the console that a session's theme overrides. */
function themeStyle(theme: PortalTheme): CSSProperties {
  const dark = theme.mode === 'dark';
  const style: Record<string, string> = dark
    ? {
        '--bg': '#111418',
        '--surface': '#1b2027',
        '--surface-muted': '#232a33',
        '--border': '#2f3742',
        '--text': '#e6e9ee',
        '--text-muted': '#9aa4b2',
      }
    : {};
  if (theme.primaryColor)
    Object.assign(style, { '--primary': theme.primaryColor, '--primary-hover': theme.primaryColor });
  if (theme.backgroundColor) style['--bg'] = theme.backgroundColor;
  if (theme.textColor) style['--text'] = theme.textColor;
  return style as CSSProperties;
}

/**
 * Focus for the portal's views, which replace one another in place (no address, no `main` to
 * focus as the console's shell does): a view that opens focuses its heading, and going back
 * focuses the button that opened the view left, so the keyboard is never dropped on `<body>`. A
 * stable callback ref: React calls it when the element mounts, not on each render.
 */
const focusOnMount = (element: HTMLElement | null) => element?.focus();

/** Whether `error` says the portal session is over (revoked, expired, or no token at all). */
const sessionOver = (error: unknown) =>
  error instanceof SessionExpiredError || (error instanceof ApiError && error.status === 401);

/** The page shown when the portal has no live session: clear words, not a broken screen. */
function SessionEnded() {
  return (
    <main className="portal portal--ended" data-testid="portal-ended">
      <h1>This webhook portal session has ended</h1>
      <p>
        The link has expired or was revoked. Open the webhook portal again from the application that sent you
        here to get a new session.
      </p>
    </main>
  );
}

function RecoverButton({ registrationId }: { registrationId: number }) {
  const [result, setResult] = useState<string>();
  const [busy, setBusy] = useState(false);
  const recover = async () => {
    setBusy(true);
    try {
      // every Failed webhook of the last 30 days back to delivery, each group in its order
      const since = new Date(Date.now() - 30 * 24 * 3600_000).toISOString();
      const operation = await startWindowOperation(registrationId, 'recover', { since });
      setResult(`Recovering: operation ${operation.id} started`);
    } catch (error) {
      setResult(errorMessage(error));
    } finally {
      setBusy(false);
    }
  };
  return (
    <>
      <Button onClick={() => void recover()} busy={busy} data-testid="portal-recover">
        Recover failed deliveries
      </Button>
      {result && (
        <span className="muted" data-testid="portal-recover-result">
          {' '}
          {result}
        </span>
      )}
    </>
  );
}

function TestButton({ registrationId }: { registrationId: number }) {
  const test = useSendTestEvent();
  return (
    <>
      <Button
        onClick={() => test.mutate({ id: registrationId, request: {} })}
        busy={test.isPending}
        data-testid="portal-test"
      >
        Send test event
      </Button>
      {test.data && (
        <span className="muted" data-testid="portal-test-result">
          {' '}
          {test.data.errorKind === null
            ? `Delivered (${test.data.statusCode})`
            : `Failed: ${test.data.errorKind}`}
        </span>
      )}
      {test.error && <span role="alert"> {errorMessage(test.error)}</span>}
    </>
  );
}

function RotateSecretButton({ registrationId }: { registrationId: number }) {
  const rotate = useRotateSecret();
  return (
    <>
      <Button
        onClick={() => rotate.mutate({ id: registrationId, request: {} })}
        busy={rotate.isPending}
        data-testid="portal-rotate-secret"
      >
        Rotate signing secret
      </Button>
      {rotate.data && (
        <span data-testid="portal-new-secret">
          {' '}
          New secret (shown once): <code>{rotate.data.signingSecret}</code>
          {rotate.data.previousSecretExpiresAt && (
            <>
              {' '}
              · the old one signs too until <DateTime value={rotate.data.previousSecretExpiresAt} />
            </>
          )}
        </span>
      )}
      {rotate.error && <span role="alert"> {errorMessage(rotate.error)}</span>}
    </>
  );
}

function PauseResumeButton({ registration }: { registration: WebhookRegistrationRead }) {
  const status = useSetRegistrationStatus();
  const action = registration.status === 'active' ? 'pause' : 'resume';
  return (
    <>
      <Button
        onClick={() => status.mutate({ id: registration.id, action })}
        busy={status.isPending}
        data-testid={`portal-${action}`}
      >
        {action === 'pause' ? 'Pause deliveries' : 'Resume deliveries'}
      </Button>
      {status.error && <span role="alert"> {errorMessage(status.error)}</span>}
    </>
  );
}

function WebhookDetail({
  id,
  actions,
  onBack,
}: {
  id: number;
  actions: ReadonlySet<PortalAction>;
  onBack: () => void;
}) {
  const webhook = useWebhook(id);
  const attempts = useWebhookAttempts(id, false);
  const act = useActOnWebhook();
  if (webhook.isPending) return <Loading />;
  if (webhook.isError) return <ErrorState error={webhook.error} />;
  return (
    <section data-testid="portal-webhook">
      <Button size="small" variant="ghost" onClick={onBack}>
        ← Back
      </Button>
      <h2 tabIndex={-1} ref={focusOnMount}>
        Delivery {webhook.data.id} <StateBadge state={webhook.data.state} />
      </h2>
      {actions.has('retry') && webhook.data.state === WebhookState.Failed && (
        <Button
          onClick={() => act.mutate({ id, action: 'retry' })}
          busy={act.isPending}
          data-testid="portal-retry"
        >
          Retry
        </Button>
      )}
      {act.error && <p role="alert">{errorMessage(act.error)}</p>}
      <h3>Body</h3>
      <pre className="code-block" data-testid="portal-webhook-body">
        {JSON.stringify(webhook.data.payload, null, 2)}
      </pre>
      <h3>Attempts</h3>
      {attempts.data ? <AttemptTimeline attempts={attempts.data.items} /> : <Loading />}
    </section>
  );
}

function RegistrationDetail({
  registration,
  actions,
  onBack,
}: {
  registration: WebhookRegistrationRead;
  actions: ReadonlySet<PortalAction>;
  onBack: () => void;
}) {
  const health = useRegistrationHealth(registration.id, 30_000);
  const webhooks = useRegistrationWebhooks(registration.id);
  const [webhookId, setWebhookId] = useState<number>();
  const [cameBackFrom, setCameBackFrom] = useState<number>();
  if (webhookId !== undefined)
    return (
      <WebhookDetail
        id={webhookId}
        actions={actions}
        onBack={() => {
          setCameBackFrom(webhookId);
          setWebhookId(undefined);
        }}
      />
    );
  return (
    <section data-testid="portal-registration">
      <Button size="small" variant="ghost" onClick={onBack}>
        ← All endpoints
      </Button>
      <h2 tabIndex={-1} ref={cameBackFrom === undefined ? focusOnMount : undefined}>
        <code>{registration.targetUrl}</code> <RegistrationStatusBadge status={registration.status} />
      </h2>
      {health.data && <HealthBadge health={health.data} />}
      <div className="portal__actions" data-testid="portal-actions">
        {actions.has('test') && <TestButton registrationId={registration.id} />}
        {actions.has('recover') && <RecoverButton registrationId={registration.id} />}
        {actions.has('rotate-secret') && <RotateSecretButton registrationId={registration.id} />}
        {actions.has('manage') && <PauseResumeButton registration={registration} />}
      </div>
      <dl className="details" data-testid="portal-settings">
        <DeliverySettings registration={registration} mayUpdate={actions.has('manage')} />
      </dl>
      <h3>Recent deliveries</h3>
      {webhooks.isPending && <Loading />}
      {webhooks.isError && <ErrorState error={webhooks.error} />}
      {webhooks.data && webhooks.data.items.length === 0 && <EmptyState title="Nothing delivered yet" />}
      {webhooks.data && webhooks.data.items.length > 0 && (
        <DataTable
          columns={['Delivery', 'Event', 'State', 'Created']}
          testId="portal-webhooks"
          label="Recent deliveries"
        >
          {webhooks.data.items.map((webhook) => (
            <tr key={webhook.id}>
              <td>
                <button
                  type="button"
                  className="link-button"
                  onClick={() => setWebhookId(webhook.id)}
                  ref={webhook.id === cameBackFrom ? focusOnMount : undefined}
                >
                  {webhook.id}
                </button>
              </td>
              <td>
                {webhook.entityName} {webhook.entityId}
              </td>
              <td>
                <StateBadge state={webhook.state} />
              </td>
              <td>
                <DateTime value={webhook.created} />
              </td>
            </tr>
          ))}
        </DataTable>
      )}
    </section>
  );
}

/**
 * A new registration for the session's party: the console's form without its Admin-only party
 * field (the API registers it for the token's party). Then its signing secret, shown once.
 */
function NewRegistration({ onDone }: { onDone: () => void }) {
  const [created, setCreated] = useState<WebhookRegistrationCreated>();
  return (
    <section data-testid="portal-new-registration">
      <Button size="small" variant="ghost" onClick={onDone}>
        ← All endpoints
      </Button>
      {created ? (
        <SigningSecretPanel registration={created}>
          <p className="form__actions">
            <Button variant="primary" onClick={onDone}>
              Back to endpoints
            </Button>
          </p>
        </SigningSecretPanel>
      ) : (
        <>
          <h2>New endpoint</h2>
          <RegistrationCreateForm allowPartyId={false} onCreated={setCreated} />
        </>
      )}
    </section>
  );
}

function Endpoints({ actions, mayCreate }: { actions: ReadonlySet<PortalAction>; mayCreate: boolean }) {
  const registrations = useRegistrations({ pageNumber: 1, pageSize: 100 });
  const [selected, setSelected] = useState<number>();
  const [cameBackFrom, setCameBackFrom] = useState<number>();
  const [creating, setCreating] = useState(false);
  if (creating) return <NewRegistration onDone={() => setCreating(false)} />;
  if (registrations.isPending) return <Loading />;
  if (registrations.isError) return <ErrorState error={registrations.error} />;
  const chosen = registrations.data.items.find((registration) => registration.id === selected);
  if (chosen)
    return (
      <RegistrationDetail
        registration={chosen}
        actions={actions}
        onBack={() => {
          setCameBackFrom(chosen.id);
          setSelected(undefined);
        }}
      />
    );
  const create = mayCreate && (
    <div className="portal__actions">
      <Button variant="primary" onClick={() => setCreating(true)} data-testid="portal-create-registration">
        New registration
      </Button>
    </div>
  );
  if (registrations.data.items.length === 0)
    return (
      <>
        {create}
        <EmptyState title="No webhook endpoints yet" />
      </>
    );
  return (
    <>
      {create}
      <DataTable
        columns={['Endpoint', 'Status', 'Health', 'Events']}
        testId="portal-registrations"
        label="Webhook endpoints"
      >
        {registrations.data.items.map((registration) => (
          <tr key={registration.id}>
            <td>
              <button
                type="button"
                className="link-button"
                onClick={() => setSelected(registration.id)}
                ref={registration.id === cameBackFrom ? focusOnMount : undefined}
              >
                {registration.targetUrl}
              </button>
            </td>
            <td>
              <RegistrationStatusBadge status={registration.status} />
            </td>
            <td>
              <RegistrationHealthCell registrationId={registration.id} />
            </td>
            <td>
              {registration.enabledEvents.map((event) => `${event.entityName}.${event.type}`).join(', ')}
            </td>
          </tr>
        ))}
      </DataTable>
    </>
  );
}

function Portal({ session }: { session: WebhookPortalSessionRead }) {
  const [tab, setTab] = useState<'endpoints' | 'catalog'>('endpoints');
  const actions = new Set(session.actions);
  return (
    <main
      className="portal"
      style={themeStyle(session.theme)}
      data-testid="portal"
      // a theme without a mode follows the system (prefers-color-scheme), as the console does
      data-theme={session.theme.mode ?? 'system'}
    >
      <header className="portal__header">
        {session.theme.logoUrl && <img className="portal__logo" src={session.theme.logoUrl} alt="" />}
        <h1>{session.theme.title ?? 'Webhooks'}</h1>
        <span className="muted">
          {session.partyName} · session ends <DateTime value={session.expiresAt} relative />
        </span>
      </header>
      <nav className="portal__tabs" aria-label="Portal">
        <Button variant={tab === 'endpoints' ? 'primary' : 'ghost'} onClick={() => setTab('endpoints')}>
          Endpoints
        </Button>
        <Button variant={tab === 'catalog' ? 'primary' : 'ghost'} onClick={() => setTab('catalog')}>
          Event catalog
        </Button>
      </nav>
      {tab === 'endpoints' ? (
        // creating a registration widens what the session sees: only a session over the whole party
        // may (PORTAL_ROUTE_RULES' wholeParty); the API refuses the others with a 403 anyway
        <Endpoints actions={actions} mayCreate={actions.has('manage') && session.registrationIds === null} />
      ) : (
        <EventCatalog />
      )}
    </main>
  );
}

function PortalScreen() {
  const ended = useSyncExternalStore(
    (listener) => portalSessionStore!.subscribe(listener),
    () => portalSessionStore!.get() === null,
  );
  const session = usePortalSession();
  if (ended || (session.isError && sessionOver(session.error))) return <SessionEnded />;
  if (session.isPending) return <Loading label="Opening the webhook portal…" />;
  if (session.isError) return <ErrorState error={session.error} />;
  return <Portal session={session.data} />;
}

/** The endpoint portal (docs/portal.md): the console's data layer and components, none of its screens. */
export function PortalApp() {
  const [queryClient] = useState(
    () =>
      new QueryClient({
        defaultOptions: { queries: { retry: shouldRetry, staleTime: 5000 }, mutations: { retry: false } },
      }),
  );
  return (
    <QueryClientProvider client={queryClient}>
      <ToastProvider>
        <PortalScreen />
      </ToastProvider>
    </QueryClientProvider>
  );
}
