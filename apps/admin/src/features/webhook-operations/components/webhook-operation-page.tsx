import { PageHeader } from '../../../components/ui/page-header';
import { Link } from '../../../lib/router';
import { FollowOperation } from './operation-progress';

/** One operation (a bulk action, recover or replay), followed until it is done: where the audit links. */
export function WebhookOperationPage({ id }: { id: number }) {
  return (
    <>
      <PageHeader
        title={`Webhook operation ${id}`}
        meta={<Link to="/operator-actions">Back to the operator actions</Link>}
      />
      <section className="card section" aria-label={`Progress of operation ${id}`}>
        <FollowOperation id={id} />
      </section>
    </>
  );
}
