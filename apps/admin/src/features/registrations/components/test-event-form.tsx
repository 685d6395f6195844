import type { WebhookRegistrationRead, WebhookTestResult } from '@platform/shared';
import { useState } from 'react';
import { ActionButton } from '../../../components/ui/action-button';
import { Field } from '../../../components/ui/field';
import { errorMessage } from '../../../lib/api-client';
import { formatDuration } from '../../../lib/format';
import { useSendTestEvent } from '../api/send-test-event';
import { testEventOptions, testEventRequest, testEventSucceeded } from '../utils/test-event';

/** What the target answered a test delivery: status, time taken, why it failed, the answer's start. */
export function TestEventResult({ result }: { result: WebhookTestResult }) {
  const ok = testEventSucceeded(result);
  return (
    <div className={`notice ${ok ? '' : 'notice--warn'}`} data-testid="test-event-result">
      <p>
        <strong>{ok ? 'The target accepted the test event' : 'The test event failed'}</strong>
        {result.statusCode !== null ? ` (HTTP ${result.statusCode})` : ''} in{' '}
        {formatDuration(result.durationMs)}.
      </p>
      <dl className="details">
        <div>
          <dt>Status code</dt>
          <dd data-testid="test-event-status">{result.statusCode ?? 'No answer'}</dd>
        </div>
        <div>
          <dt>Duration</dt>
          <dd data-testid="test-event-duration">{formatDuration(result.durationMs)}</dd>
        </div>
        <div>
          <dt>Error kind</dt>
          <dd data-testid="test-event-error-kind">{result.errorKind ?? 'None'}</dd>
        </div>
      </dl>
      {result.responseExcerpt !== null && result.responseExcerpt !== '' && (
        <>
          <p className="small muted">Start of the answer (secrets redacted)</p>
          <pre className="code" data-testid="test-event-response">
            {result.responseExcerpt}
          </pre>
        </>
      )}
    </div>
  );
}

/**
 * Sends one test delivery to the registration's target now, with its authorization and signature
 * and the `x-webhook-test: 1` header; no webhook row is written. The answer shows in place.
 */
export function TestEventForm({
  registration,
  mayUpdate,
  permissionNoticeId,
}: {
  registration: Pick<WebhookRegistrationRead, 'id' | 'enabledEvents'>;
  mayUpdate: boolean;
  /** The section's notice saying the permission is missing. */
  permissionNoticeId?: string;
}) {
  const send = useSendTestEvent();
  const [event, setEvent] = useState('');
  const options = testEventOptions(registration.enabledEvents);
  return (
    <div className="test-event">
      <h3 className="section__subtitle">Send a test event</h3>
      <p className="muted small">
        One delivery now, signed and authorized like a real one and marked with the header{' '}
        <code>x-webhook-test: 1</code>. It is not stored as a webhook and is never retried.
      </p>
      <div className="form__row form__row--inline">
        <Field label="Event">
          <select value={event} onChange={(e) => setEvent(e.target.value)} disabled={send.isPending}>
            {options.map((option) => (
              <option key={option.value} value={option.value}>
                {option.label}
              </option>
            ))}
          </select>
        </Field>
        <div className="field field--button">
          <ActionButton
            availability={{ allowed: true }}
            missingPermission={mayUpdate ? undefined : 'Webhook.Update'}
            permissionNoticeId={permissionNoticeId}
            busy={send.isPending}
            onClick={() => send.mutate({ id: registration.id, request: testEventRequest(event) })}
          >
            Send test event
          </ActionButton>
        </div>
      </div>
      <div aria-live="polite">
        {send.isPending ? (
          <p className="muted">Sending the test event…</p>
        ) : send.isError ? (
          <p className="form-error" role="alert" data-testid="test-event-error">
            The test event was not sent: {errorMessage(send.error)}
          </p>
        ) : send.data ? (
          <TestEventResult result={send.data} />
        ) : null}
      </div>
    </div>
  );
}
