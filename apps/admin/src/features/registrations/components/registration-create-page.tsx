import { PartyType, type WebhookRegistrationCreated } from '@platform/shared';
import { useState } from 'react';
import { PageHeader } from '../../../components/ui/page-header';
import { Link } from '../../../lib/router';
import { usePermission, useSession } from '../../../lib/use-session';
import { RegistrationCreateForm } from './registration-create-form';
import { SigningSecretPanel } from './signing-secret-panel';

/** Registers a webhook target; the answer's signing secret is shown once. */
export function RegistrationCreatePage() {
  const session = useSession();
  const mayCreate = usePermission('WebhookRegistration.Create');
  const isAdmin = session?.claims.partyType === PartyType.Admin;
  const [created, setCreated] = useState<WebhookRegistrationCreated>();

  if (created) {
    return (
      <>
        <PageHeader title="New registration" />
        <SigningSecretPanel registration={created} />
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

  return (
    <>
      <PageHeader title="New registration">
        <Link to="/registrations" className="button button--ghost">
          Cancel
        </Link>
      </PageHeader>
      <RegistrationCreateForm allowPartyId={isAdmin} onCreated={setCreated} />
    </>
  );
}
