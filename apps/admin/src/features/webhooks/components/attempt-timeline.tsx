import { WebhookState, type WebhookAttemptRead } from '@platform/shared';
import { DateTime } from '../../../components/ui/date-time';
import { EmptyState } from '../../../components/ui/feedback';
import { formatDuration } from '../../../lib/format';
import { AttemptRecord } from './attempt-record';

/** What an attempt came to, in words: `200 OK`-like for successes, the error kind otherwise. */
export function attemptOutcome(
  attempt: Pick<WebhookAttemptRead, 'statusCode' | 'errorKind'> & { sentRequest?: boolean },
): {
  ok: boolean;
  label: string;
} {
  if (attempt.errorKind === null) return { ok: true, label: `Delivered (${attempt.statusCode ?? '2xx'})` };
  if (attempt.sentRequest === false) return { ok: false, label: `Skipped: ${attempt.errorKind}` };
  const status = attempt.statusCode === null ? '' : ` (${attempt.statusCode})`;
  return { ok: false, label: `Failed: ${attempt.errorKind}${status}` };
}

/** Every HTTP try of a webhook, newest first: when, how long, what the target answered. */
export function AttemptTimeline({ attempts }: { attempts: readonly WebhookAttemptRead[] }) {
  if (attempts.length === 0) {
    return (
      <EmptyState title="No attempts yet">
        <p>The dispatcher records each attempt here as it makes it.</p>
      </EmptyState>
    );
  }
  return (
    <ol className="timeline" aria-label="Attempts, newest first" data-testid="attempt-timeline">
      {attempts.map((attempt) => {
        const outcome = attemptOutcome(attempt);
        return (
          <li
            key={attempt.id}
            className={`timeline__item ${outcome.ok ? 'timeline__item--ok' : 'timeline__item--failed'}`}
            data-testid="attempt"
          >
            <div className="timeline__header">
              <h3 className="timeline__title">Attempt {attempt.number}</h3>
              <span
                className={`badge badge--state-${outcome.ok ? WebhookState.Successful : WebhookState.Failed}`}
              >
                {outcome.label}
              </span>
            </div>
            <dl className="timeline__facts">
              <div>
                <dt>Started</dt>
                <dd>
                  <DateTime value={attempt.startedAt} />
                </dd>
              </div>
              <div>
                <dt>Duration</dt>
                <dd>{formatDuration(attempt.durationMs)}</dd>
              </div>
              <div>
                <dt>Status code</dt>
                <dd data-testid="attempt-status">{attempt.statusCode ?? '—'}</dd>
              </div>
              <div>
                <dt>Error kind</dt>
                <dd data-testid="attempt-error-kind">{attempt.errorKind ?? '—'}</dd>
              </div>
            </dl>
            {attempt.skipReason && (
              <p className="small" data-testid="attempt-skip-note">
                {attempt.skipReason}
              </p>
            )}
            {attempt.responseBody ? (
              <details className="timeline__response">
                <summary>
                  Response excerpt <code>{attempt.responseBody.slice(0, 160)}</code>
                </summary>
                <pre className="code">{attempt.responseBody}</pre>
              </details>
            ) : (
              <p className="muted small">No response body.</p>
            )}
            <AttemptRecord webhookId={attempt.webhookId} attemptId={attempt.id} />
          </li>
        );
      })}
    </ol>
  );
}
