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

  return (
    <>
      <PageHeader title="New registration">
        <Link to="/registrations" className="button button--ghost">
          Cancel
        </Link>
      </PageHeader>
      {!mayCreate && (
        <p className="notice notice--warn" role="status">
          Your account lacks the WebhookRegistration.Create permission; the API will refuse this.
        </p>
      )}
      <RegistrationCreateForm allowPartyId={isAdmin} onCreated={setCreated} />
    </>
  );
}
