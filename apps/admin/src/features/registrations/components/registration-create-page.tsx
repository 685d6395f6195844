import { PartyType, WebhookAuthType } from '@platform/shared';
import { useRef, useState, type FormEvent } from 'react';
import { Button } from '../../../components/ui/button';
import { Field } from '../../../components/ui/field';
import { PageHeader } from '../../../components/ui/page-header';
import { errorMessage, fieldErrors } from '../../../lib/api-client';
import { Link } from '../../../lib/router';
import { usePermission, useSession } from '../../../lib/use-session';
import { AUTH_TYPE_NAMES } from '../../../lib/webhook-states';
import { useCreateRegistration } from '../api/create-registration';
import {
  EMPTY_REGISTRATION_FORM,
  formErrorsFromProblem,
  toRegistrationWrite,
  validateRegistrationForm,
  type FormErrors,
  type RegistrationForm,
} from '../utils/registration-form';
import { RateLimitField } from './delivery-settings';
import { EventsPicker } from './events-picker';
import { SigningSecretPanel } from './signing-secret-panel';

const AUTH_HINTS: Record<number, string> = {
  [WebhookAuthType.NoAuth]: 'Only the signature authenticates the delivery.',
  [WebhookAuthType.BasicAuth]: 'Sent as an Authorization: Basic header. Stored encrypted, never shown again.',
  [WebhookAuthType.PlatformBearerInHeader]:
    'A platform-signed JWT in the Authorization header; the receiver verifies it with the JWKS.',
  [WebhookAuthType.PlatformBearerInBody]: 'A platform-signed JWT in the body as platformSignedBearerToken.',
  [WebhookAuthType.TargetApiToken]: 'Sent as the x-api-key header. Stored encrypted, never shown again.',
};

/** Registers a webhook target; the answer's signing secret is shown once. */
export function RegistrationCreatePage() {
  const session = useSession();
  const mayCreate = usePermission('WebhookRegistration.Create');
  const isAdmin = session?.claims.partyType === PartyType.Admin;
  const [form, setForm] = useState<RegistrationForm>(EMPTY_REGISTRATION_FORM);
  const [errors, setErrors] = useState<FormErrors>({});
  const summaryRef = useRef<HTMLDivElement>(null);
  const create = useCreateRegistration();

  const update = <K extends keyof RegistrationForm>(key: K, value: RegistrationForm[K]) =>
    setForm((current) => ({ ...current, [key]: value }));

  const submit = (event: FormEvent) => {
    event.preventDefault();
    const found = validateRegistrationForm(form);
    setErrors(found);
    if (Object.keys(found).length > 0) {
      summaryRef.current?.focus();
      return;
    }
    create.mutate(toRegistrationWrite(form), {
      onError: (error) => {
        setErrors(formErrorsFromProblem(fieldErrors(error)));
        // after React shows the summary
        window.setTimeout(() => summaryRef.current?.focus());
      },
    });
  };

  if (create.data) {
    return (
      <>
        <PageHeader title="New registration" />
        <SigningSecretPanel registration={create.data} />
      </>
    );
  }

  // a read-only account gets the reason and the way back, not a form whose submit the API refuses
  if (!mayCreate) {
    return (
      <>
        <PageHeader title="New registration" />
        <div className="notice notice--warn" role="status" data-testid="create-not-allowed">
          <p>
            Your account cannot create registrations: it lacks the WebhookRegistration.Create permission. Ask
            an administrator of your party for it.
          </p>
          <Link to="/registrations">Back to the registrations</Link>
        </div>
      </>
    );
  }

  const errorCount = Object.values(errors).flat().length;
  const problem =
    create.error && !Object.keys(fieldErrors(create.error)).length ? errorMessage(create.error) : null;
  const generalErrors = errors[''] ?? [];

  return (
    <>
      <PageHeader title="New registration">
        <Link to="/registrations" className="button button--ghost">
          Cancel
        </Link>
      </PageHeader>
      <div ref={summaryRef} tabIndex={-1} className="form-summary-anchor">
        {(errorCount > 0 || problem) && (
          <div className="form-error" role="alert" data-testid="form-errors">
            {problem ??
              `The registration was not created: ${errorCount === 1 ? 'one field needs' : `${errorCount} fields need`} attention.`}
            {generalErrors.length > 0 && <p>{generalErrors.join(' ')}</p>}
          </div>
        )}
      </div>
      <form className="form card" onSubmit={submit} aria-label="New registration" noValidate>
        <Field
          label="Target URL"
          errors={errors.targetUrl}
          hint="Absolute http or https URL without credentials; the target is not contacted now."
        >
          <input
            type="url"
            name="targetUrl"
            value={form.targetUrl}
            onChange={(e) => update('targetUrl', e.target.value)}
            placeholder="https://example.com/webhooks"
            required
            autoComplete="off"
            spellCheck={false}
          />
        </Field>

        <EventsPicker
          value={form.events}
          onChange={(events) => update('events', events)}
          errors={errors.enabledEvents}
        />

        <fieldset className="fieldset">
          <legend className="fieldset__legend">Grouping</legend>
          <label className="checkbox">
            <input
              type="checkbox"
              checked={form.shouldGroup}
              onChange={(e) => {
                update('shouldGroup', e.target.checked);
                if (!e.target.checked) update('shouldGroupContinueAfterFail', false);
              }}
            />
            Deliver the changes of one entity in order (group them)
          </label>
          <label className="checkbox">
            <input
              type="checkbox"
              checked={form.shouldGroupContinueAfterFail}
              disabled={!form.shouldGroup}
              onChange={(e) => update('shouldGroupContinueAfterFail', e.target.checked)}
            />
            Continue the group after a webhook fails
          </label>
          {errors.shouldGroupContinueAfterFail && (
            <p className="field__error">{errors.shouldGroupContinueAfterFail.join(' ')}</p>
          )}
          <p className="field__hint">
            Without “continue”, a Failed webhook holds its group until an operator resolves, aborts or retries
            it.
          </p>
        </fieldset>

        <fieldset className="fieldset">
          <legend className="fieldset__legend">Target authorization</legend>
          <Field label="Authorization type" hint={AUTH_HINTS[form.authType]}>
            <select value={form.authType} onChange={(e) => update('authType', Number(e.target.value))}>
              {Object.entries(AUTH_TYPE_NAMES).map(([type, name]) => (
                <option key={type} value={type}>
                  {name}
                </option>
              ))}
            </select>
          </Field>
          {form.authType === WebhookAuthType.BasicAuth && (
            <div className="form__row">
              <Field label="User name" errors={errors['targetAuthorization.username']}>
                <input
                  value={form.username}
                  onChange={(e) => update('username', e.target.value)}
                  autoComplete="off"
                  spellCheck={false}
                />
              </Field>
              <Field label="Password" errors={errors['targetAuthorization.password']}>
                <input
                  type="password"
                  value={form.password}
                  onChange={(e) => update('password', e.target.value)}
                  autoComplete="new-password"
                />
              </Field>
            </div>
          )}
          {form.authType === WebhookAuthType.TargetApiToken && (
            <Field label="API key" errors={errors['targetAuthorization.apiKey']}>
              <input
                type="password"
                value={form.apiKey}
                onChange={(e) => update('apiKey', e.target.value)}
                autoComplete="off"
                spellCheck={false}
              />
            </Field>
          )}
          {errors['targetAuthorization.type'] && (
            <p className="field__error">{errors['targetAuthorization.type'].join(' ')}</p>
          )}
        </fieldset>

        <RateLimitField
          value={form.rateLimit}
          errors={errors.rateLimit}
          onChange={(rateLimit) => update('rateLimit', rateLimit)}
        />

        {isAdmin && (
          <Field
            label="Party id (optional)"
            errors={errors.partyId}
            hint="Admin only: register for another party (Admin or Property Management Company). Empty: your own."
          >
            <input
              inputMode="numeric"
              value={form.partyId}
              onChange={(e) => update('partyId', e.target.value.trim())}
            />
          </Field>
        )}

        <div className="form__actions">
          <Button type="submit" variant="primary" busy={create.isPending}>
            Create registration
          </Button>
        </div>
      </form>
    </>
  );
}
