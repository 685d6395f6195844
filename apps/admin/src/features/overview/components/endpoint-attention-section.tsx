import type { ReactNode } from 'react';
import { ReceiverHold, RegistrationLinks } from '../../../components/endpoint-facts';
import { BreakerBadge } from '../../../components/ui/breaker-badge';
import { DateTime } from '../../../components/ui/date-time';
import { ErrorState, Loading } from '../../../components/ui/feedback';
import { formatCount } from '../../../lib/format';
import { DISABLED_REASON_TEXT } from '../../../lib/registration-health';
import { Link } from '../../../lib/router';
import { ATTENTION_REFRESH_MS, useEndpointAttention } from '../api/get-endpoint-attention';
import type { EndpointAttention, EndpointNeedingAttention } from '../utils/endpoint-attention';
import { TargetUrl } from '../../../components/ui/target-url';

function RegistrationLink({ id }: { id: number }) {
  return <Link to={`/registrations/${id}`}>Registration {id}</Link>;
}

function Column({
  title,
  count,
  testId,
  empty,
  children,
}: {
  title: string;
  count: number;
  testId: string;
  empty: string;
  children: ReactNode;
}) {
  return (
    <section className="card" aria-label={title} data-testid={testId}>
      <h3 className="section__title">
        {title} ({formatCount(count)})
      </h3>
      {count === 0 ? <p className="muted">{empty}</p> : <ul className="attention__list">{children}</ul>}
    </section>
  );
}

/** A paused or disabled registration: its party and target, why (when disabled) and since when. */
function StoppedRegistration({
  registration,
  testId,
}: {
  registration: EndpointAttention['disabled'][number];
  testId: string;
}) {
  return (
    <li className="attention__item" data-testid={testId}>
      <RegistrationLink id={registration.id} />{' '}
      <span className="attention__party">{registration.partyName}</span>{' '}
      <TargetUrl url={registration.targetUrl} className="cell--url" />
      {registration.disabledReason && (
        <span className="small attention__reason">{DISABLED_REASON_TEXT[registration.disabledReason]}</span>
      )}
      <span className="muted small">
        {' '}
        since <DateTime value={registration.statusChanged} relative />
      </span>
    </li>
  );
}

/** One endpoint needing attention: its party and URL, breaker, hold and registrations. */
function EndpointItem({ endpoint }: { endpoint: EndpointNeedingAttention }) {
  const { breaker } = endpoint;
  return (
    <li className="attention__item" data-testid="attention-endpoint">
      <span className="attention__party">{endpoint.partyName}</span> <code>{endpoint.url}</code>
      {breaker.state !== 'closed' && (
        <>
          {' '}
          <BreakerBadge state={breaker.state} />
          <span className="muted small">
            {' '}
            {formatCount(breaker.consecutiveFailures)} consecutive failures
            {breaker.state === 'open' && breaker.openUntil && (
              <>
                {' '}
                · trial <DateTime value={breaker.openUntil} relative />
              </>
            )}
          </span>
        </>
      )}
      {endpoint.holdUntil && (
        <span className="small">
          {' '}
          <ReceiverHold holdUntil={endpoint.holdUntil} />
        </span>
      )}
      <br />
      <span className="small">
        <RegistrationLinks registrations={endpoint.registrations} more={endpoint.moreRegistrations} />
      </span>
    </li>
  );
}

/** The three lists: endpoints needing attention, paused and disabled registrations. */
export function AttentionLists({ attention }: { attention: EndpointAttention }) {
  const { endpoints, paused, disabled } = attention;
  return (
    <div className="attention">
      <Column
        title="Endpoints needing attention"
        count={endpoints.length}
        testId="attention-endpoints"
        empty="Every breaker is closed and no receiver holds its deliveries."
      >
        {endpoints.map((endpoint) => (
          <EndpointItem key={endpoint.endpointId} endpoint={endpoint} />
        ))}
      </Column>
      <Column
        title="Paused"
        count={paused.length}
        testId="paused-registrations"
        empty="No registration is paused."
      >
        {paused.map((registration) => (
          <StoppedRegistration
            key={registration.id}
            registration={registration}
            testId="paused-registration"
          />
        ))}
      </Column>
      <Column
        title="Disabled"
        count={disabled.length}
        testId="disabled-registrations"
        empty="No registration is disabled."
      >
        {disabled.map((registration) => (
          <StoppedRegistration
            key={registration.id}
            registration={registration}
            testId="disabled-registration"
          />
        ))}
      </Column>
    </div>
  );
}

/** The overview's endpoint section: which endpoints and registrations are not delivering. */
export function EndpointAttentionSection() {
  const { registrations, attention, breakerReadsFailed, checked, total } = useEndpointAttention();
  return (
    <section aria-labelledby="endpoints-heading" className="section" data-testid="endpoint-attention">
      <div className="section__header">
        <h2 id="endpoints-heading" className="section__title">
          Endpoints
        </h2>
        <span className="muted small">
          {total > checked
            ? `The ${formatCount(checked)} newest of ${formatCount(total)} registrations`
            : 'Every registration'}{' '}
          · refreshes every {ATTENTION_REFRESH_MS / 1000} s
        </span>
      </div>
      {registrations.isPending ? (
        <Loading label="Loading the endpoints…" />
      ) : !attention ? (
        <ErrorState error={registrations.error} onRetry={() => registrations.refetch()} />
      ) : (
        <>
          {attention.unknownEndpoints > 0 && (
            <p className="muted small" data-testid="breakers-unknown">
              {breakerReadsFailed > 0
                ? `The health of ${formatCount(breakerReadsFailed)} endpoints could not be read; endpoints needing attention may be missing.`
                : `Reading the health of ${formatCount(attention.unknownEndpoints)} endpoints…`}
            </p>
          )}
          <AttentionLists attention={attention} />
        </>
      )}
    </section>
  );
}
