import type { WebhookRegistrationCreated } from '@platform/shared';
import { useEffect, useRef } from 'react';
import { CopyButton } from '../../../components/ui/copy-button';
import { Link } from '../../../lib/router';

/**
 * The signing secret of a new registration, shown this once: the API never returns it again.
 * Focus moves here so keyboard and screen-reader users meet it first.
 */
export function SigningSecretPanel({ registration }: { registration: WebhookRegistrationCreated }) {
  const headingRef = useRef<HTMLHeadingElement>(null);
  useEffect(() => headingRef.current?.focus(), []);
  return (
    <section
      className="card secret-panel"
      aria-labelledby="secret-heading"
      data-testid="signing-secret-panel"
    >
      <h2 id="secret-heading" ref={headingRef} tabIndex={-1} className="section__title">
        Registration {registration.id} created
      </h2>
      <p>
        Copy the signing secret now and give it to the receiver: it verifies the{' '}
        <code>webhook-signature</code> header of every delivery (Standard Webhooks).{' '}
        <strong>It is shown only this once.</strong>
      </p>
      <div className="secret">
        <code className="secret__value" data-testid="signing-secret" aria-label="Signing secret">
          {registration.signingSecret}
        </code>
        <CopyButton text={registration.signingSecret} label="Copy secret" />
      </div>
      <p className="form__actions">
        <Link className="button button--primary" to={`/registrations/${registration.id}`}>
          Go to registration {registration.id}
        </Link>
        <Link className="button button--secondary" to="/registrations">
          Back to registrations
        </Link>
      </p>
    </section>
  );
}
