import { WebhookAuthType, type WebhookDetailRead } from '@platform/shared';
import { WebhookState } from '@platform/shared';
import { useEffect, useId, useRef, useState } from 'react';
import { ActionButton, missingPermissionReason } from '../../../components/ui/action-button';
import { Button } from '../../../components/ui/button';
import { ConfirmDialog } from '../../../components/ui/dialog';
import { useToast } from '../../../components/ui/toast';
import { CopyButton } from '../../../components/ui/copy-button';
import { DateTime } from '../../../components/ui/date-time';
import { ErrorState, Loading, PageLoadError } from '../../../components/ui/feedback';
import { PageHeader } from '../../../components/ui/page-header';
import { StateBadge } from '../../../components/ui/state-badge';
import { useWebhookActionConfirmation } from '../../../components/webhook-action-confirmation';
import { ApiError, errorMessage } from '../../../lib/api-client';
import { deliveryHeaders } from '../../../lib/delivery-headers';
import { prettyJson } from '../../../lib/format';
import { Link, navigate } from '../../../lib/router';
import { usePermission } from '../../../lib/use-session';
import {
  actionAvailability,
  authTypeName,
  eventTypeName,
  isMovingState,
  webhookStateName,
  WEBHOOK_ACTION_COPY,
  WEBHOOK_STATE_DESCRIPTIONS,
  type WebhookAction,
} from '../../../lib/webhook-states';
import { useActOnWebhook } from '../api/act-on-webhook';
import { useResendWebhook } from '../api/resend-webhook';
import { MOVING_REFRESH_MS, useWebhook } from '../api/get-webhook';
import { useWebhookAttempts } from '../api/get-webhook-attempts';
import { useInitiatorAccount } from '../api/get-initiator';
import { lastActionText } from '../utils/last-action';
import { useWebhookRegistration } from '../api/get-webhook-registration';
import { AttemptTimeline } from './attempt-timeline';
import { TargetUrl } from '../../../components/ui/target-url';

const ACTIONS: WebhookAction[] = ['abort', 'resolve', 'retry'];

function ActionBar({ webhook }: { webhook: WebhookDetailRead }) {
  const act = useActOnWebhook();
  const mayUpdate = usePermission('Webhook.Update');
  const { ask, dialog } = useWebhookActionConfirmation((id, action) => act.mutateAsync({ id, action }));
  const noticeId = useId();
  return (
    <div className="action-bar" role="group" aria-label="Operator actions">
      {ACTIONS.map((action) => (
        <ActionButton
          key={action}
          variant={action === 'retry' ? 'primary' : 'secondary'}
          availability={actionAvailability(action, webhook.state)}
          missingPermission={mayUpdate ? undefined : 'Webhook.Update'}
          permissionNoticeId={noticeId}
          onClick={() => ask(webhook.id, action)}
        >
          {WEBHOOK_ACTION_COPY[action].label}
        </ActionButton>
      ))}
      <ResendButton
        webhook={webhook}
        missingPermission={mayUpdate ? undefined : 'Webhook.Update'}
        permissionNoticeId={noticeId}
      />
      {/* one visible sentence for the buttons, not the same one under each */}
      {!mayUpdate && (
        <p id={noticeId} className="action-hint" data-testid="action-disabled-reason">
          {missingPermissionReason('Webhook.Update')}
        </p>
      )}
      {dialog}
    </div>
  );
}

/**
 * Resend: a new webhook with the same body (docs/admin.md › Resend). On success the console opens
 * the new webhook; a refusal (a later webhook of its group supersedes it) is shown as the API says it.
 */
function ResendButton({
  webhook,
  missingPermission,
  permissionNoticeId,
}: {
  webhook: WebhookDetailRead;
  missingPermission?: string;
  permissionNoticeId: string;
}) {
  const resend = useResendWebhook();
  const toast = useToast();
  const [asking, setAsking] = useState(false);
  const availability =
    webhook.state === WebhookState.Successful
      ? { allowed: true }
      : {
          allowed: false,
          reason: `Only a Successful webhook can be resent; this one is ${webhookStateName(webhook.state)}.`,
        };
  const confirm = async () => {
    try {
      const created = await resend.mutateAsync(webhook.id);
      toast.success(`Webhook ${webhook.id} resent as webhook ${created.id}.`);
      navigate(`/webhooks/${created.id}`);
    } catch (error) {
      toast.error(`Webhook ${webhook.id} was not resent: ${errorMessage(error)}`);
    } finally {
      setAsking(false);
    }
  };
  return (
    <>
      <ActionButton
        variant="secondary"
        availability={availability}
        missingPermission={missingPermission}
        permissionNoticeId={permissionNoticeId}
        onClick={() => setAsking(true)}
      >
        Resend
      </ActionButton>
      <ConfirmDialog
        open={asking}
        title={`Resend webhook ${webhook.id}?`}
        confirmLabel="Resend webhook"
        busy={resend.isPending}
        onConfirm={confirm}
        onCancel={() => setAsking(false)}
      >
        <p>
          A new webhook delivers the same body again, recorded in the audit trail. This webhook stays as it
          is.
          {webhook.groupKey &&
            ' In its group the new webhook comes last; only the group’s latest webhook can be resent, so an older state never follows a newer one.'}
        </p>
      </ConfirmDialog>
    </>
  );
}

function HeadersTable({
  webhook,
  latestAttemptStartedAt,
}: {
  webhook: WebhookDetailRead;
  latestAttemptStartedAt?: string;
}) {
  const registration = useWebhookRegistration(webhook.registrationId);
  if (registration.isPending) return <Loading label="Loading the registration’s authorization type…" />;
  const authType = registration.data?.targetAuthorization.type;
  const headers = deliveryHeaders({
    webhookId: webhook.id,
    authType,
    attemptStartedAt: latestAttemptStartedAt,
  });
  const deleted = registration.error instanceof ApiError && registration.error.status === 404;
  return (
    <>
      <p className="muted small">
        {authType === undefined
          ? deleted
            ? 'The registration has been deleted, so its authorization type is unknown.'
            : 'The registration could not be read, so its authorization type is unknown.'
          : `Authorization: ${authTypeName(authType)}. Secrets and the signature are masked; the console never sees them.`}
      </p>
      <div className="table-wrap">
        <table className="table table--compact" aria-label="Headers sent" data-testid="delivery-headers">
          <thead>
            <tr>
              <th scope="col">Header</th>
              <th scope="col">Value</th>
            </tr>
          </thead>
          <tbody>
            {headers.map((header) => (
              <tr key={header.name}>
                <th scope="row" data-label="Header" className="cell--wide">
                  <code className="header-name">{header.name}</code>
                </th>
                <td data-label="Value" className="cell--wide">
                  <code className={header.masked ? 'masked' : undefined}>{header.value}</code>
                  {header.note && <span className="muted small header-note">{header.note}</span>}
                </td>
              </tr>
            ))}
          </tbody>
        </table>
      </div>
      {authType === WebhookAuthType.PlatformBearerInBody && (
        <p className="muted small">
          The body also carries <code>platformSignedBearerToken</code>, minted at each delivery and never
          stored.
        </p>
      )}
    </>
  );
}

/**
 * The party and account a change came from, by name: the party's as the webhook names it (null
 * only when its row is gone), the account's when the operator may read it; the ids muted beside.
 */
function Initiator({
  partyId,
  partyName,
  accountId,
}: {
  partyId: number;
  partyName: string | null;
  accountId: number | null;
}) {
  const account = useInitiatorAccount(accountId).data;
  const accountName = account
    ? [account.firstName, account.lastName].filter(Boolean).join(' ') || account.email
    : undefined;
  return (
    <>
      {partyName ?? `Party ${partyId}`}
      {accountId !== null && (accountName ? ` · ${accountName}` : `, account ${accountId}`)}
      {(partyName !== null || accountName) && (
        <span className="muted small">
          {' '}
          (party {partyId}
          {accountId !== null && `, account ${accountId}`})
        </span>
      )}
    </>
  );
}

/** One webhook: where it stands, what it delivers, what was sent, every attempt, and the actions. */
export function WebhookDetailPage({ id }: { id: number }) {
  const webhook = useWebhook(id);
  const moving = webhook.data ? isMovingState(webhook.data.state) : false;
  const attempts = useWebhookAttempts(id, moving ? MOVING_REFRESH_MS : false);
  // a completed attempt changes the webhook (state, last modified): fetch the attempts then too,
  // or the one that made it Failed would wait for a manual refresh once polling stops
  const version = webhook.data ? `${webhook.data.state}/${webhook.data.lastModified}` : undefined;
  const seenVersion = useRef(version);
  const { refetch: refetchAttempts } = attempts;
  useEffect(() => {
    if (version === seenVersion.current) return;
    const first = seenVersion.current === undefined;
    seenVersion.current = version;
    if (!first) void refetchAttempts();
  }, [version, refetchAttempts]);

  if (webhook.isPending) return <Loading label="Loading the webhook…" />;
  if (webhook.isError) {
    return (
      <PageLoadError
        title={`Webhook ${id}`}
        error={webhook.error}
        onRetry={() => webhook.refetch()}
        back={{ to: '/webhooks', label: 'Back to webhooks' }}
      />
    );
  }
  const data = webhook.data;
  const body = prettyJson(data.payload);
  return (
    <>
      <PageHeader
        title={
          <>
            Webhook {data.id} <StateBadge state={data.state} />
          </>
        }
        meta={
          <>
            {WEBHOOK_STATE_DESCRIPTIONS[data.state]}
            {moving && <span className="live-dot" aria-hidden="true" />}
          </>
        }
      >
        <ActionBar webhook={data} />
      </PageHeader>

      <section className="card section" aria-labelledby="summary-heading">
        <h2 id="summary-heading" className="section__title">
          Summary
        </h2>
        <dl className="details">
          <div>
            <dt>Event</dt>
            <dd>
              {data.entityName} {eventTypeName(data.eventType)}
            </dd>
          </div>
          <div>
            <dt>Entity</dt>
            <dd>
              <Link to={`/webhooks?entityName=${data.entityName}&entityId=${data.entityId}`}>
                {data.entityName} {data.entityId}
              </Link>
            </dd>
          </div>
          <div>
            <dt>Registration</dt>
            <dd>
              <TargetUrl url={data.targetUrl} className="target-url" testId="webhook-target-url" />{' '}
              <Link to={`/registrations/${data.registrationId}`}>Registration {data.registrationId}</Link>
            </dd>
          </div>
          <div>
            <dt>Attempts</dt>
            <dd data-testid="webhook-attempt-count">{data.attemptCount}</dd>
          </div>
          <div>
            <dt>Next attempt</dt>
            <dd>
              <DateTime value={data.nextAttemptAt} relative />
            </dd>
          </div>
          <div>
            <dt>Group</dt>
            <dd>
              {data.groupKey ? (
                <>
                  <code>{data.groupKey}</code> <span className="muted">position {data.groupSeq}</span>
                </>
              ) : (
                'Not grouped'
              )}
            </dd>
          </div>
          <div>
            <dt>Created</dt>
            <dd>
              <DateTime value={data.created} />
            </dd>
          </div>
          <div>
            <dt>Last modified</dt>
            <dd>
              <DateTime value={data.lastModified} />
            </dd>
          </div>
          <div>
            <dt>Completed</dt>
            <dd>
              <DateTime value={data.completedAt} />
            </dd>
          </div>
          <div>
            <dt>Initiated by</dt>
            <dd data-testid="webhook-initiator">
              <Initiator
                partyId={data.initiatorPartyId}
                partyName={data.initiatorPartyName}
                accountId={data.initiatorAccountId}
              />
            </dd>
          </div>
          <div>
            <dt>Last operator action</dt>
            <dd data-testid="webhook-last-action">
              {data.lastAction ? (
                <>
                  {lastActionText(data.lastAction)}, <DateTime value={data.lastAction.at} relative />
                </>
              ) : (
                <span className="muted">None</span>
              )}
            </dd>
          </div>
        </dl>
      </section>

      <div className="split">
        <section className="card section" aria-labelledby="body-heading">
          <div className="section__header">
            <h2 id="body-heading" className="section__title">
              Delivery body
            </h2>
            <CopyButton text={body} label="Copy body" />
          </div>
          <pre
            className="code code--json"
            tabIndex={0}
            aria-label="Delivery body (JSON)"
            data-testid="delivery-body"
          >
            {body}
          </pre>
        </section>
        <section className="card section" aria-labelledby="headers-heading">
          <h2 id="headers-heading" className="section__title">
            Headers sent
          </h2>
          <HeadersTable webhook={data} latestAttemptStartedAt={attempts.data?.items[0]?.startedAt} />
        </section>
      </div>

      <section className="card section" aria-labelledby="attempts-heading">
        <div className="section__header">
          <h2 id="attempts-heading" className="section__title">
            Attempts ({attempts.data?.totalCount ?? data.attemptCount})
          </h2>
          <Button
            size="small"
            variant="ghost"
            onClick={() => void Promise.all([webhook.refetch(), attempts.refetch()])}
          >
            Refresh
          </Button>
        </div>
        {attempts.isPending ? (
          <Loading label="Loading attempts…" />
        ) : attempts.isError ? (
          <ErrorState error={attempts.error} onRetry={() => attempts.refetch()} />
        ) : (
          <AttemptTimeline attempts={attempts.data.items} />
        )}
      </section>
    </>
  );
}
