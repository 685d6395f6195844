import type { WebhookRegistrationHealth } from '@platform/shared';
import type { UseQueryResult } from '@tanstack/react-query';
import type { ReactNode } from 'react';
import { ReceiverHold, RegistrationLinks } from '../../../components/endpoint-facts';
import { BreakerBadge } from '../../../components/ui/breaker-badge';
import { DateTime } from '../../../components/ui/date-time';
import { ErrorState, Loading } from '../../../components/ui/feedback';
import { RegistrationStatusBadge } from '../../../components/ui/registration-status-badge';
import { useNow } from '../../../components/ui/use-now';
import { formatCount, formatDuration, formatPercent } from '../../../lib/format';
import { isHeld, rateLimitText } from '../../../lib/registration-health';
import { HealthChart } from './health-chart';

type Window = WebhookRegistrationHealth['lastHour'];

function windowSummary(window: Window): string {
  if (window.attempts === 0) return 'No attempts';
  // requests (what the receiver saw) and skips (attempts the breaker recorded without one) apart
  const skipped = window.skipped === 0 ? '' : ` · ${formatCount(window.skipped)} skipped (no request sent)`;
  if (window.requests === 0) return `No requests${skipped}`;
  return (
    `${formatPercent(window.successRate)} · ${formatCount(window.successes)} of ${formatCount(window.requests)} ` +
    `requests${skipped} · p50 ${formatDuration(window.p50Ms)} · p95 ${formatDuration(window.p95Ms)}`
  );
}

function Fact({ term, testId, children }: { term: string; testId: string; children: ReactNode }) {
  return (
    <div>
      <dt>{term}</dt>
      <dd data-testid={testId}>{children}</dd>
    </div>
  );
}

/** How often the panel looks at the clock, so "Held by the receiver" ends when the hold does. */
const HOLD_CHECK_MS = 5_000;

/**
 * The figures of a health answer: status; the endpoint (its URL, the registrations sharing it,
 * its breaker, the receiver's hold, its last success and failure); the rate limit; both windows,
 * the queue, and the failing run.
 */
export function HealthFigures({ health }: { health: WebhookRegistrationHealth }) {
  const { breaker, endpoint } = health;
  const now = useNow(HOLD_CHECK_MS);
  return (
    <>
      <dl className="details">
        <Fact term="Status" testId="health-status">
          <RegistrationStatusBadge status={health.status} />
          {health.statusChanged && (
            <span className="muted small">
              {' '}
              since <DateTime value={health.statusChanged} relative />
            </span>
          )}
        </Fact>
        <Fact term="Endpoint" testId="health-endpoint">
          <code>{endpoint.url}</code>
          <span className="muted small breaker__failures" data-testid="endpoint-shared-with">
            {endpoint.sharedWithCount === 0 ? (
              'No other registration delivers to it.'
            ) : (
              <>
                Shared with{' '}
                <RegistrationLinks
                  registrations={endpoint.sharedWith}
                  more={endpoint.sharedWithCount - endpoint.sharedWith.length}
                />{' '}
                (same party and URL: one breaker, one hold)
              </>
            )}
          </span>
        </Fact>
        <Fact term="Circuit breaker" testId="breaker-state">
          <BreakerBadge state={breaker.state} />
          {breaker.state === 'open' && breaker.openUntil && (
            <span className="muted small">
              {' '}
              until <DateTime value={breaker.openUntil} relative />
            </span>
          )}
          <span className="muted small breaker__failures" data-testid="breaker-failures">
            {formatCount(breaker.consecutiveFailures)} consecutive failure
            {breaker.consecutiveFailures === 1 ? '' : 's'}
          </span>
        </Fact>
        <Fact term="Receiver hold" testId="health-hold">
          {isHeld(health.holdUntil, now) ? <ReceiverHold holdUntil={health.holdUntil} /> : 'Not held'}
        </Fact>
        <Fact term="Rate limit" testId="health-rate-limit">
          {rateLimitText(health.rateLimit)}
        </Fact>
        <Fact term="Endpoint’s last success" testId="endpoint-last-success">
          <DateTime value={endpoint.lastSuccessAt} relative />
        </Fact>
        <Fact term="Endpoint’s last failure" testId="endpoint-last-failure">
          <DateTime value={endpoint.lastFailureAt} relative />
        </Fact>
        <Fact term="Last hour" testId="health-last-hour">
          {windowSummary(health.lastHour)}
        </Fact>
        <Fact term="Last day" testId="health-last-day">
          {windowSummary(health.lastDay)}
        </Fact>
        <Fact term="Awaiting delivery" testId="health-due-count">
          {formatCount(health.dueCount)}
          {health.dueCountCapped ? '+' : ''}
        </Fact>
        <Fact term="Oldest awaiting since" testId="health-oldest-due">
          <DateTime value={health.oldestDueAt} relative />
        </Fact>
        <Fact term="In flight" testId="health-in-flight">
          {formatCount(health.inFlight)}
        </Fact>
        <Fact term="Last success" testId="health-last-success">
          <DateTime value={health.lastSuccessAt} relative />
        </Fact>
        <Fact term="Failing since" testId="health-failing-since">
          {health.failingSince ? <DateTime value={health.failingSince} relative /> : 'Not failing'}
        </Fact>
      </dl>
      <HealthChart health={health} />
    </>
  );
}

/** The health section of a registration's page, from its polled health answer. */
export function RegistrationHealthPanel({ health }: { health: UseQueryResult<WebhookRegistrationHealth> }) {
  return (
    <section className="card section" aria-labelledby="health-heading" data-testid="health-panel">
      <h2 id="health-heading" className="section__title">
        Delivery health
      </h2>
      {health.data ? (
        <>
          {health.isError && (
            <p className="notice notice--warn" role="status">
              The last refresh failed; these figures may be out of date.
            </p>
          )}
          <HealthFigures health={health.data} />
        </>
      ) : health.isPending ? (
        <Loading label="Loading its health…" />
      ) : (
        <ErrorState error={health.error} onRetry={() => health.refetch()} />
      )}
    </section>
  );
}
