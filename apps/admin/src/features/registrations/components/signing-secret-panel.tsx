import type { WebhookRegistrationCreated } from '@platform/shared';
import type { ReactNode } from 'react';
import { Link } from '../../../lib/router';
import { OnceSecretPanel } from './once-secret-panel';

/**
 * The signing secret of a new registration, shown this once: the API never returns it again.
 * `children`: where to go next (the console's links when left out).
 */
export function SigningSecretPanel({
  registration,
  children,
}: {
  registration: WebhookRegistrationCreated;
  children?: ReactNode;
}) {
  return (
    <OnceSecretPanel
      title={`Registration ${registration.id} created`}
      level={2}
      testId="signing-secret-panel"
      secret={registration.signingSecret}
      secretLabel="Signing secret"
      intro={
        <>
          Copy the signing secret now and give it to the receiver: it verifies the{' '}
          <code>webhook-signature</code> header of every delivery (Standard Webhooks).{' '}
          <strong>It is shown only this once.</strong>
        </>
      }
    >
      {children ?? (
        <p className="form__actions">
          <Link className="button button--primary" to={`/registrations/${registration.id}`}>
            Go to registration {registration.id}
          </Link>
          <Link className="button button--secondary" to="/registrations">
            Back to registrations
          </Link>
        </p>
      )}
    </OnceSecretPanel>
  );
}
