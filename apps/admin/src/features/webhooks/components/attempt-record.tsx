import { useState } from 'react';
import { ErrorState, Loading } from '../../../components/ui/feedback';
import { formatDuration, prettyJson } from '../../../lib/format';
import { useWebhookAttempt } from '../api/get-webhook-attempt';

function HeaderList({ label, headers }: { label: string; headers: Record<string, string> }) {
  const entries = Object.entries(headers);
  if (entries.length === 0) return <p className="muted small">No headers.</p>;
  return (
    <div className="table-wrap">
      <table className="table table--compact" aria-label={label}>
        <thead>
          <tr>
            <th scope="col">Header</th>
            <th scope="col">Value</th>
          </tr>
        </thead>
        <tbody>
          {entries.map(([name, value]) => (
            <tr key={name}>
              <th scope="row" data-label="Header" className="cell--wide">
                <code className="header-name">{name}</code>
              </th>
              <td data-label="Value" className="cell--wide">
                <code>{value}</code>
              </td>
            </tr>
          ))}
        </tbody>
      </table>
    </div>
  );
}

/** The record of one attempt, read when opened: the request as sent and the answer. */
function AttemptRecordBody({ webhookId, attemptId }: { webhookId: number; attemptId: number }) {
  const attempt = useWebhookAttempt(webhookId, attemptId, true);
  if (attempt.isPending) return <Loading label="Loading the attempt’s record…" />;
  if (attempt.isError) return <ErrorState error={attempt.error} onRetry={() => attempt.refetch()} />;
  const data = attempt.data;
  if (!data.sentRequest) {
    return (
      <p data-testid="attempt-skip-reason">
        <strong>Skipped, nothing was sent.</strong> {data.skipReason}
      </p>
    );
  }
  return (
    <div className="attempt-record">
      <section aria-label={`Request of attempt ${data.number}`} data-testid="attempt-request">
        <h4>Request</h4>
        {data.request ? (
          <>
            <p className="small">
              <code>POST {data.request.url}</code>
            </p>
            <HeaderList label="Request headers" headers={data.request.headers} />
          </>
        ) : (
          <p className="muted small">This attempt was recorded before requests were kept: no headers.</p>
        )}
        <pre
          className="code code--json"
          tabIndex={0}
          aria-label="Request body"
          data-testid="attempt-request-body"
        >
          {prettyJson(data.requestBody)}
        </pre>
      </section>
      <section aria-label={`Response of attempt ${data.number}`} data-testid="attempt-response">
        <h4>
          Response{' '}
          <span className="muted small">
            {data.statusCode ?? 'no answer'} · {formatDuration(data.durationMs)}
          </span>
        </h4>
        {data.responseHeaders ? (
          <HeaderList label="Response headers" headers={data.responseHeaders} />
        ) : (
          <p className="muted small">No response headers.</p>
        )}
        <pre className="code" tabIndex={0} aria-label="Response body" data-testid="attempt-response-body">
          {data.responseBody ?? '(no body)'}
        </pre>
      </section>
    </div>
  );
}

/**
 * An attempt's full record behind a disclosure, fetched only when opened (the list stays light):
 * request headers and body as sent, the answer's status, headers and body, the duration, or why a
 * skip sent nothing. Credentials show as `[redacted]`, as the API stores them.
 */
export function AttemptRecord({ webhookId, attemptId }: { webhookId: number; attemptId: number }) {
  const [open, setOpen] = useState(false);
  return (
    <details
      className="timeline__response"
      data-testid="attempt-record"
      onToggle={(event) => setOpen(event.currentTarget.open)}
    >
      <summary>Full record</summary>
      {open && <AttemptRecordBody webhookId={webhookId} attemptId={attemptId} />}
    </details>
  );
}
