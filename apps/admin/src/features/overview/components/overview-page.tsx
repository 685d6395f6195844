import { WebhookState, type WebhookStatsRead } from '@platform/shared';
import type { ReactNode } from 'react';
import { PageHeader } from '../../../components/ui/page-header';
import { ErrorState, Loading } from '../../../components/ui/feedback';
import { Button } from '../../../components/ui/button';
import { useNow } from '../../../components/ui/use-now';
import { Link } from '../../../lib/router';
import {
  formatCount,
  formatDuration,
  formatLatencies,
  formatPercent,
  formatRelative,
  successRateTone,
} from '../../../lib/format';
import { WEBHOOK_STATE_DESCRIPTIONS, webhookStateName } from '../../../lib/webhook-states';
import { STATS_REFRESH_MS, useWebhookStats } from '../api/get-webhook-stats';
import { AttemptsChart } from './attempts-chart';
import { DeliverySeries } from './delivery-series';
import { EndpointAttentionSection } from './endpoint-attention-section';

function Metric({
  label,
  value,
  detail,
  tone,
  testId,
}: {
  label: string;
  value: ReactNode;
  detail?: ReactNode;
  tone?: 'good' | 'warn' | 'bad';
  testId: string;
}) {
  return (
    <div className={`metric ${tone ? `metric--${tone}` : ''}`} data-testid={testId}>
      <dt className="metric__label">{label}</dt>
      <dd className="metric__value">{value}</dd>
      {detail && <dd className="metric__detail">{detail}</dd>}
    </div>
  );
}

/**
 * Everything not yet delivered, apart from what is due now: the Created, Retrying and Pending
 * counts, what is in delivery, and what waits for a later attempt (a Retrying one backing off)
 * with when the next is due. "Due now 0" with 28 Retrying minutes out is then plain to read.
 */
function AwaitingMetric({ stats }: { stats: WebhookStatsRead }) {
  const now = useNow(5000);
  const count = (state: WebhookState) =>
    stats.countsByState.find((entry) => entry.state === state)?.count ?? 0;
  const created = count(WebhookState.Created);
  const retrying = count(WebhookState.Retrying);
  const pending = count(WebhookState.Pending);
  return (
    <Metric
      label="Awaiting delivery"
      testId="metric-awaiting"
      value={formatCount(created + retrying + pending)}
      detail={
        <ul className="metric__parts">
          <li data-testid="metric-retrying">
            <Link to={`/webhooks?state=${WebhookState.Retrying}`}>{formatCount(retrying)} Retrying</Link>
          </li>
          <li data-testid="metric-pending">
            <Link to={`/webhooks?state=${WebhookState.Pending}`}>{formatCount(pending)} Pending</Link> behind
            their group
          </li>
          <li data-testid="metric-created">
            <Link to={`/webhooks?state=${WebhookState.Created}`}>{formatCount(created)} Created</Link>
          </li>
          <li data-testid="metric-in-flight">{formatCount(stats.inFlight)} in delivery now</li>
          <li data-testid="metric-scheduled">
            {formatCount(stats.scheduled)} scheduled later
            {stats.nextScheduledAt && `, next ${formatRelative(stats.nextScheduledAt, now)}`}
          </li>
        </ul>
      }
    />
  );
}

/**
 * Webhooks that would be due but wait for their registration's resume: apart from "Due now",
 * which counts only what the dispatchers should be sending, so a disabled registration's backlog
 * does not read as a stalled dispatcher.
 */
function HeldDue({ held }: { held: WebhookStatsRead['dueHeld'] }) {
  if (held.paused === 0 && held.disabled === 0) return null;
  const parts = [
    held.paused ? `${formatCount(held.paused)} of paused registrations` : '',
    held.disabled ? `${formatCount(held.disabled)} of disabled registrations` : '',
  ].filter(Boolean);
  return (
    <span className="metric__held" data-testid="metric-due-held">
      {' '}
      Not counted, held until resumed: {parts.join(', ')}.
    </span>
  );
}

function Figures({ stats }: { stats: WebhookStatsRead }) {
  const { latencyMs } = stats;
  return (
    <>
      <section aria-labelledby="health-heading" className="section">
        <h2 id="health-heading" className="section__title">
          Last hour
        </h2>
        <dl className="metrics">
          <Metric
            label="Success rate"
            testId="metric-success-rate"
            value={formatPercent(stats.successRate)}
            tone={successRateTone(stats.successRate)}
            detail={
              stats.requests
                ? `${formatCount(stats.requests - stats.failures)} of ${formatCount(stats.requests)} requests`
                : 'No requests'
            }
          />
          <Metric
            label="Requests · skipped"
            testId="metric-requests"
            value={
              <>
                <span data-testid="metric-requests-sent">{formatCount(stats.requests)}</span> ·{' '}
                <span data-testid="metric-skipped">{formatCount(stats.skipped)}</span>
              </>
            }
            detail={
              stats.skipped === 0
                ? 'Every attempt sent a request'
                : `Skipped, no request sent: ${stats.skippedByReason
                    .map(({ reason, count }) => `${formatCount(count)} ${reason}`)
                    .join(', ')}`
            }
          />
          <Metric
            label="Latency p50 · p90 · p99"
            testId="metric-latency"
            value={formatLatencies([latencyMs.p50, latencyMs.p90, latencyMs.p99])}
            detail="Duration of the requests sent (skips left out)"
          />
          <Metric
            label="Due now"
            testId="metric-due-backlog"
            value={formatCount(stats.dueBacklog)}
            tone={stats.oldestDueSeconds !== null && stats.oldestDueSeconds > 60 ? 'warn' : undefined}
            detail={
              <>
                {stats.oldestDueSeconds === null
                  ? 'Nothing due now (see awaiting delivery)'
                  : `Oldest due for ${formatDuration(stats.oldestDueSeconds * 1000)}`}
                <HeldDue held={stats.dueHeld} />
              </>
            }
          />
          <AwaitingMetric stats={stats} />
          <Metric
            label="Blocked groups"
            testId="metric-blocked-groups"
            value={
              <Link to="/webhook-groups" className="metric__link">
                {formatCount(stats.blockedGroups)}
              </Link>
            }
            tone={stats.blockedGroups > 0 ? 'bad' : 'good'}
            detail={stats.blockedGroups ? 'Held by a Failed webhook' : 'Every group flowing'}
          />
        </dl>
      </section>

      <EndpointAttentionSection />

      <section aria-labelledby="chart-heading" className="section card">
        <h2 id="chart-heading" className="section__title">
          Requests and failures per minute
        </h2>
        <AttemptsChart points={stats.attemptsPerMinute} />
      </section>

      <DeliverySeries />

      <section aria-labelledby="states-heading" className="section">
        <h2 id="states-heading" className="section__title">
          Webhooks by state
        </h2>
        <ul className="state-tiles">
          {stats.countsByState.map(({ state, count }) => (
            <li key={state}>
              <Link
                to={`/webhooks?state=${state}`}
                className={`state-tile state-tile--${state}`}
                title={WEBHOOK_STATE_DESCRIPTIONS[state]}
                data-testid={`state-count-${webhookStateName(state)}`}
              >
                <span className="state-tile__count">{formatCount(count)}</span>
                <span className="state-tile__name">{webhookStateName(state)}</span>
              </Link>
            </li>
          ))}
        </ul>
      </section>
    </>
  );
}

/** The overview: how the engine is doing, refreshed every ~10 s while visible. */
export function OverviewPage() {
  const stats = useWebhookStats();
  const now = useNow(1000);
  return (
    <>
      <PageHeader
        title="Overview"
        meta={
          stats.data && (
            <span aria-live="off">
              Updated {formatRelative(new Date(stats.dataUpdatedAt).toISOString(), now)} · refreshes every{' '}
              {STATS_REFRESH_MS / 1000} s
            </span>
          )
        }
      >
        <Button size="small" onClick={() => stats.refetch()}>
          Refresh
        </Button>
      </PageHeader>
      {stats.isPending ? (
        <Loading label="Loading the figures…" />
      ) : stats.isError && !stats.data ? (
        <ErrorState error={stats.error} onRetry={() => stats.refetch()} />
      ) : (
        <>
          {stats.isError && (
            <p className="notice notice--warn" role="status">
              The last refresh failed; these figures are from{' '}
              {formatRelative(new Date(stats.dataUpdatedAt).toISOString(), now)}.
            </p>
          )}
          <Figures stats={stats.data} />
        </>
      )}
    </>
  );
}
