import type { WebhookNotificationSettingsRead, WebhookNotificationSettingsWrite } from '@platform/shared';
import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { useState, type FormEvent } from 'react';
import { Button } from '../../../components/ui/button';
import { ErrorState, Loading } from '../../../components/ui/feedback';
import { Field } from '../../../components/ui/field';
import { PageHeader } from '../../../components/ui/page-header';
import { api } from '../../../lib/api';
import { errorMessage, fieldErrors } from '../../../lib/api-client';
import { Link } from '../../../lib/router';
import { usePermission, useSession } from '../../../lib/use-session';
import { OnceSecretPanel } from '../../registrations/components/once-secret-panel';

const key = (partyId: number) => ['webhook-notifications', partyId] as const;

interface Form {
  /** `default`: the party's accounts with a Webhook permission; `list`: the addresses typed. */
  who: 'default' | 'list';
  emails: string;
  webhookUrl: string;
  breakerOpenMinutes: string;
}

const formOf = (settings: WebhookNotificationSettingsRead): Form => ({
  who: settings.emails === null ? 'default' : 'list',
  emails: (settings.emails ?? []).join('\n'),
  webhookUrl: settings.webhookUrl ?? '',
  breakerOpenMinutes: String(settings.breakerOpenMinutes),
});

/** The request body of the form; the API checks every field (ProblemDetails shown by field). */
const bodyOf = (form: Form): WebhookNotificationSettingsWrite => ({
  emails:
    form.who === 'default'
      ? null
      : form.emails
          .split(/[\s,;]+/)
          .map((email) => email.trim())
          .filter(Boolean),
  webhookUrl: form.webhookUrl.trim() || null,
  breakerOpenMinutes: Number(form.breakerOpenMinutes),
});

function SettingsForm({ settings }: { settings: WebhookNotificationSettingsRead }) {
  const mayUpdate = usePermission('Webhook.Update');
  const queryClient = useQueryClient();
  const [form, setForm] = useState<Form>(() => formOf(settings));
  const save = useMutation({
    mutationFn: (body: WebhookNotificationSettingsWrite) =>
      api.request<WebhookNotificationSettingsRead>(`/api/webhook-notifications/${settings.partyId}`, {
        method: 'PUT',
        json: body,
      }),
    gcTime: 0,
    onSuccess: (saved) => {
      const { signingSecret: _secret, ...kept } = saved;
      queryClient.setQueryData(key(settings.partyId), kept);
    },
  });
  const errors = save.error ? fieldErrors(save.error) : {};
  const errorsOf = (field: string) =>
    Object.entries(errors)
      .filter(([name]) => name === field || name.startsWith(`${field}.`))
      .flatMap(([, messages]) => messages);
  const submit = (event: FormEvent) => {
    event.preventDefault();
    save.mutate(bodyOf(form));
  };
  const update = <K extends keyof Form>(name: K, value: Form[K]) =>
    setForm((current) => ({ ...current, [name]: value }));

  return (
    <>
      {save.data?.signingSecret && (
        <OnceSecretPanel
          title="Operator webhook secret"
          level={2}
          testId="operator-secret-panel"
          secret={save.data.signingSecret}
          secretLabel="Operator webhook signing secret"
          intro="It verifies the webhook-signature header of every operator webhook (Standard Webhooks). It is shown only this once."
        >
          <p />
        </OnceSecretPanel>
      )}
      {save.isSuccess && (
        <p className="notice" role="status" data-testid="notifications-saved">
          Saved. Notification mails go to: {save.data.recipients.join(', ') || 'nobody'}.
        </p>
      )}
      {save.error && Object.keys(errors).length === 0 && (
        <p className="form-error" role="alert">
          {errorMessage(save.error)}
        </p>
      )}
      <form className="form card" onSubmit={submit} aria-label="Notifications" noValidate>
        <p>
          When a registration of this party is disabled, or an endpoint’s circuit breaker stays open longer
          than the time below, these are told: once per event (a breaker once per opening).
        </p>
        <fieldset className="fieldset">
          <legend className="fieldset__legend">Mail</legend>
          <label className="checkbox">
            <input
              type="radio"
              name="who"
              checked={form.who === 'default'}
              onChange={() => update('who', 'default')}
            />
            The party’s accounts holding a Webhook permission
          </label>
          <label className="checkbox">
            <input
              type="radio"
              name="who"
              checked={form.who === 'list'}
              onChange={() => update('who', 'list')}
            />
            These addresses (none: no mail)
          </label>
          {form.who === 'list' && (
            <Field label="Addresses" hint="One per line." errors={errorsOf('emails')}>
              <textarea
                name="emails"
                rows={3}
                value={form.emails}
                onChange={(e) => update('emails', e.target.value)}
              />
            </Field>
          )}
          <p className="field__hint" data-testid="notification-recipients">
            Mailed now: {settings.recipients.join(', ') || 'nobody'}
          </p>
        </fieldset>
        <Field
          label="Operator webhook URL (optional)"
          hint="A signed POST (Standard Webhooks) of each notification. Its secret is shown once, when a URL is first set."
          errors={errorsOf('webhookUrl')}
        >
          <input
            name="webhookUrl"
            type="url"
            value={form.webhookUrl}
            onChange={(e) => update('webhookUrl', e.target.value)}
            spellCheck={false}
          />
        </Field>
        <Field label="Tell a breaker open after (minutes)" errors={errorsOf('breakerOpenMinutes')}>
          <input
            name="breakerOpenMinutes"
            inputMode="numeric"
            value={form.breakerOpenMinutes}
            onChange={(e) => update('breakerOpenMinutes', e.target.value.trim())}
          />
        </Field>
        <div className="form__actions">
          <Button type="submit" variant="primary" busy={save.isPending} disabled={!mayUpdate}>
            Save notifications
          </Button>
          {!mayUpdate && <span className="muted"> Saving needs the Webhook.Update permission.</span>}
        </div>
      </form>
    </>
  );
}

/** Notifications to operators of the signed-in party (docs/admin.md#notifications). */
export function NotificationsPage() {
  const session = useSession();
  const partyId = session?.claims.partyId ?? 0;
  const settings = useQuery({
    queryKey: key(partyId),
    queryFn: ({ signal }) =>
      api.request<WebhookNotificationSettingsRead>(`/api/webhook-notifications/${partyId}`, { signal }),
    enabled: partyId > 0,
  });
  return (
    <>
      <PageHeader
        title="Notifications"
        meta="Who is told when a registration is disabled or an endpoint’s breaker stays open."
      >
        <Link to="/registrations" className="button button--ghost">
          Registrations
        </Link>
      </PageHeader>
      {settings.isPending && <Loading />}
      {settings.isError && <ErrorState error={settings.error} />}
      {settings.data && <SettingsForm key={partyId} settings={settings.data} />}
    </>
  );
}
