import type { WebhookRegistrationRead } from '@platform/shared';
import { useState, type FormEvent } from 'react';
import { Button } from '../../../components/ui/button';
import { Field } from '../../../components/ui/field';
import { useToast } from '../../../components/ui/toast';
import { errorMessage, fieldErrors } from '../../../lib/api-client';
import { rateLimitText } from '../../../lib/registration-health';
import { useUpdateRegistration } from '../api/update-registration';
import {
  deliverySettingsOf,
  formErrorsFromProblem,
  toRegistrationPatch,
  validateDeliverySettings,
  type DeliverySettingsForm,
  type FormErrors,
} from '../utils/registration-form';
import { TargetUrl } from '../../../components/ui/target-url';

/**
 * The target URL and rate limit of a registration, the two settings the API lets change
 * (docs/webhooks.md#registrations), shown and, with WebhookRegistration.Update, edited in place.
 * A new URL may move the registration to another endpoint (another breaker, another hold): the
 * form says so before it is saved.
 */
export function DeliverySettings({
  registration,
  mayUpdate,
}: {
  registration: WebhookRegistrationRead;
  mayUpdate: boolean;
}) {
  const toast = useToast();
  const update = useUpdateRegistration();
  const [form, setForm] = useState<DeliverySettingsForm | null>(null);
  const [errors, setErrors] = useState<FormErrors>({});
  const editing = form !== null && registration.deleted === null;

  const submit = (event: FormEvent) => {
    event.preventDefault();
    if (!form) return;
    const found = validateDeliverySettings(form);
    setErrors(found);
    if (Object.keys(found).length > 0) return;
    const patch = toRegistrationPatch(form, registration);
    if (!patch) {
      setForm(null);
      return;
    }
    update.mutate(
      { id: registration.id, patch },
      {
        onSuccess: () => {
          setForm(null);
          toast.success(`Registration ${registration.id} saved.`);
        },
        onError: (error) => {
          const problems = formErrorsFromProblem(fieldErrors(error));
          setErrors(problems);
          if (Object.keys(problems).length === 0)
            toast.error(`Registration ${registration.id} was not saved: ${errorMessage(error)}`);
        },
      },
    );
  };

  if (!editing) {
    return (
      <>
        <div>
          <dt>Target URL</dt>
          <dd className="cell--url">
            <TargetUrl url={registration.targetUrl} testId="registration-target-url" />
          </dd>
        </div>
        <div>
          <dt>Rate limit</dt>
          <dd data-testid="registration-rate-limit">{rateLimitText(registration.rateLimit)}</dd>
        </div>
        {mayUpdate && registration.deleted === null && (
          <div>
            <dt className="visually-hidden">Delivery settings</dt>
            <dd>
              <Button
                onClick={() => {
                  setErrors({});
                  setForm(deliverySettingsOf(registration));
                }}
              >
                Edit URL and rate limit
              </Button>
            </dd>
          </div>
        )}
      </>
    );
  }

  const urlChanged = form.targetUrl.trim() !== registration.targetUrl;
  return (
    <div className="details__wide">
      <dt>Delivery settings</dt>
      <dd>
        <form onSubmit={submit} noValidate aria-label="Delivery settings">
          <Field
            label="Target URL"
            errors={errors.targetUrl}
            hint={
              urlChanged
                ? 'Webhooks not yet delivered go to the new URL. Another URL is another endpoint: its own breaker, hold and limits.'
                : undefined
            }
          >
            <input
              name="targetUrl"
              type="url"
              value={form.targetUrl}
              onChange={(e) => setForm({ ...form, targetUrl: e.target.value })}
              spellCheck={false}
            />
          </Field>
          <RateLimitField
            value={form.rateLimit}
            errors={errors.rateLimit}
            onChange={(rateLimit) => setForm({ ...form, rateLimit })}
          />
          <div className="form__actions">
            <Button type="submit" variant="primary" disabled={update.isPending}>
              {update.isPending ? 'Saving…' : 'Save'}
            </Button>
            <Button onClick={() => setForm(null)} disabled={update.isPending}>
              Cancel
            </Button>
          </div>
        </form>
      </dd>
    </div>
  );
}

/** The rate limit input, as the create form and the settings edit show it. */
export function RateLimitField({
  value,
  errors,
  onChange,
}: {
  value: string;
  errors: readonly string[] | undefined;
  onChange: (value: string) => void;
}) {
  return (
    <Field
      label="Rate limit (optional)"
      errors={errors}
      hint="Deliveries per second at most, across every dispatcher; empty for no limit. Registrations of one URL share the lowest limit."
    >
      <input
        name="rateLimit"
        inputMode="numeric"
        value={value}
        onChange={(e) => onChange(e.target.value.trim())}
        placeholder="unlimited"
      />
    </Field>
  );
}
