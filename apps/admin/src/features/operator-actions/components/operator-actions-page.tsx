import { OPERATOR_ACTION_NAMES, type OperatorActionRead } from '@platform/shared';
import { useState } from 'react';
import { DateTime } from '../../../components/ui/date-time';
import { EmptyState, ErrorState, Loading } from '../../../components/ui/feedback';
import { Field } from '../../../components/ui/field';
import { FilterForm } from '../../../components/ui/filter-form';
import { BadLinkNotice } from '../../../components/ui/bad-link-notice';
import { unreadParams } from '../../../lib/address-problems';
import { PageHeader } from '../../../components/ui/page-header';
import { Pagination } from '../../../components/ui/pagination';
import { DataTable } from '../../../components/ui/table';
import { Link, navigate, useLocation } from '../../../lib/router';
import { useOperatorActions } from '../api/get-operator-actions';
import {
  operatorActionFieldsOf,
  operatorActionQueryFromSearch,
  operatorActionQueryOfFields,
  operatorActionQueryToSearch,
  changedLabel,
  describeActionFilter,
  describeDetail,
  OPERATOR_ACTION_LABELS,
  operatorActionLabel,
  type OperatorActionFilterFields,
  type OperatorActionQuery,
} from '../utils/operator-actions';

/** Who acted: the account's email as the API answers it (its own party's people), else its id. */
function Actor({ entry }: { entry: Pick<OperatorActionRead, 'accountId' | 'accountEmail'> }) {
  if (entry.accountId === null) return <span className="muted">System</span>;
  return (
    <span>
      {entry.accountEmail ? (
        <span data-testid="audit-actor-email">{entry.accountEmail}</span>
      ) : (
        <>Account {entry.accountId}</>
      )}
      {entry.accountEmail && <span className="muted small"> (account {entry.accountId})</span>}
    </span>
  );
}

/** What an action was taken on: links to the registration, the webhook and the operation. */
function Target({ entry }: { entry: OperatorActionRead }) {
  const parts = [];
  if (entry.registrationId !== null) {
    parts.push(
      <Link key="registration" to={`/registrations/${entry.registrationId}`}>
        Registration {entry.registrationId}
      </Link>,
    );
  }
  if (entry.webhookId !== null) {
    parts.push(
      <Link key="webhook" to={`/webhooks/${entry.webhookId}`}>
        Webhook {entry.webhookId}
      </Link>,
    );
  }
  if (entry.operationId !== null) {
    parts.push(
      <Link key="operation" to={`/webhook-operations/${entry.operationId}`}>
        Operation {entry.operationId}
      </Link>,
    );
  }
  if (parts.length === 0) return <span className="muted">—</span>;
  return (
    <ul className="plain-list">
      {parts.map((part) => (
        <li key={part.key}>{part}</li>
      ))}
    </ul>
  );
}

function AuditRow({ entry }: { entry: OperatorActionRead }) {
  const filter = describeActionFilter(entry.filter);
  const detail = describeDetail(entry.detail);
  return (
    <tr data-testid="audit-entry" data-action={entry.action}>
      <td data-label="When">
        <DateTime value={entry.created} relative />
      </td>
      <td data-label="Who">
        <Actor entry={entry} />
      </td>
      <th scope="row" data-label="Action" data-testid="audit-action">
        {operatorActionLabel(entry.action)}
        {entry.dryRun && <span className="badge badge--tone-none"> dry run</span>}
      </th>
      <td data-label="Target">
        <Target entry={entry} />
      </td>
      <td data-label="Filter" data-testid="audit-filter">
        {filter || <span className="muted">—</span>}
        {detail && <div className="muted small">{detail}</div>}
      </td>
      <td data-label="Changed" data-testid="audit-changed">
        {changedLabel(entry)}
      </td>
    </tr>
  );
}

/** The id filters, as typed (checked on submit by `operatorActionQueryOfFields`). */
const ID_FIELDS = [
  ['registrationId', 'Registration id'],
  ['accountId', 'Account id'],
] as const;

function AuditFilters({
  query,
  onApply,
}: {
  query: OperatorActionQuery;
  onApply: (query: OperatorActionQuery) => void;
}) {
  const [fields, setFields] = useState<OperatorActionFilterFields>(() => operatorActionFieldsOf(query));
  const [problems, setProblems] = useState<Partial<OperatorActionFilterFields>>({});
  const set = (key: keyof OperatorActionFilterFields) => (event: { target: { value: string } }) =>
    setFields((current) => ({ ...current, [key]: event.target.value }));
  const submit = () => {
    const next = operatorActionQueryOfFields(fields);
    setProblems(next.problems ?? {});
    if (next.query) onApply(next.query);
  };
  const clear = () => {
    setFields({ action: '', registrationId: '', accountId: '' });
    setProblems({});
    onApply({ page: 1 });
  };
  const errors = (key: keyof OperatorActionFilterFields) => (problems[key] ? [problems[key]] : undefined);
  return (
    <FilterForm label="Filter the audit trail" onSubmit={submit} onClear={clear}>
      <div className="form__row">
        <Field label="Action">
          <select value={fields.action} onChange={set('action')} name="action">
            <option value="">Any action</option>
            {OPERATOR_ACTION_NAMES.map((action) => (
              <option key={action} value={action}>
                {OPERATOR_ACTION_LABELS[action]}
              </option>
            ))}
          </select>
        </Field>
        {ID_FIELDS.map(([key, label]) => (
          <Field key={key} label={label} errors={errors(key)}>
            <input value={fields[key]} onChange={set(key)} inputMode="numeric" name={key} placeholder="Any" />
          </Field>
        ))}
      </div>
    </FilterForm>
  );
}

/** The audit trail: who did what, when, to what, with which filter and how many rows changed. */
export function OperatorActionsPage() {
  const { search } = useLocation();
  const query = operatorActionQueryFromSearch(new URLSearchParams(search));
  const actions = useOperatorActions(query);
  const go = (next: OperatorActionQuery) => navigate(`/operator-actions${operatorActionQueryToSearch(next)}`);
  const filtered =
    query.action !== undefined || query.registrationId !== undefined || query.accountId !== undefined;

  return (
    <>
      <PageHeader title="Operator actions (audit trail)" meta="What operators did, newest first" />
      <BadLinkNotice
        problems={unreadParams(new URLSearchParams(search), query, {
          action: 'not an action the audit trail records',
          registrationId: 'not a registration id',
          accountId: 'not an account id',
          page: 'not a page number',
        })}
        asRead={`/operator-actions${operatorActionQueryToSearch(query)}`}
        noun="actions"
      />
      {/* keyed by the address, so back/forward shows the filters of the list it shows */}
      <AuditFilters key={search} query={query} onApply={go} />
      {actions.isPending ? (
        <Loading label="Loading the audit trail…" />
      ) : actions.isError ? (
        <ErrorState error={actions.error} onRetry={() => actions.refetch()} />
      ) : actions.data.totalCount === 0 ? (
        <EmptyState title={filtered ? 'No action matches these filters' : 'No operator action yet'}>
          <p>
            {filtered
              ? 'Change or clear the filters to see more.'
              : 'Retries, aborts, resolves, recovers, replays, test events and secret rotations appear here.'}
          </p>
        </EmptyState>
      ) : (
        <>
          <DataTable
            label="Operator actions"
            testId="audit-table"
            busy={actions.isPlaceholderData}
            columns={['When', 'Who', 'Action', 'Target', 'Filter', 'Changed']}
          >
            {actions.data.items.map((entry) => (
              <AuditRow key={entry.id} entry={entry} />
            ))}
          </DataTable>
          <div className="list-footer">
            <Pagination
              page={actions.data}
              noun="actions"
              loading={actions.isPlaceholderData}
              onPageChange={(page) => go({ ...query, page })}
            />
          </div>
        </>
      )}
    </>
  );
}
